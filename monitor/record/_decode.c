/*
 * The record decode loop of monitor/record/v2.py (_decode_columns) in C: the same fields, the same
 * checks, the same column lists. Optional: where it cannot be built, the Python loop runs instead,
 * and the tests run both on the same bytes and compare them.
 *
 * Record (DefaultRecord): length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
 * keyLength varint (-1 null), key, valueLength varint (-1 null), value, headersCount varint, then per
 * header keyLength varint, key (UTF-8), valueLength varint (-1 null), value. Zigzag varints.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* 0 ok; -1 ran past the data; -2 longer than 10 bytes */
static int read_varint(const unsigned char *buf, Py_ssize_t end, Py_ssize_t *pos, int64_t *out) {
    uint64_t result = 0;
    int shift = 0;
    for (;;) {
        if (*pos >= end) return -1;
        unsigned char b = buf[(*pos)++];
        result |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
        if (shift >= 70) return -2;
    }
    *out = (int64_t)((result >> 1) ^ (~(result & 1) + 1));
    return 0;
}

#define FAIL(...) do { PyErr_Format(PyExc_ValueError, __VA_ARGS__); goto error; } while (0)
#define VARINT(dst) do { int rc_ = read_varint(buf, end, &pos, &(dst)); \
    if (rc_ == -1) FAIL("record data ends early or is malformed: varint past the end at %zd", pos); \
    if (rc_ == -2) FAIL("record data ends early or is malformed: varint longer than 10 bytes at %zd", pos); \
} while (0)

static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

static PyObject *decode_columns(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count;
    long long base_offset, base_ts, max_ts;
    int log_append;
    if (!PyArg_ParseTuple(args, "y*nLLLp", &view, &count, &base_offset, &base_ts, &max_ts, &log_append))
        return NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len, pos = 0;
    PyObject *offsets = PyList_New(0), *timestamps = PyList_New(0), *keys = PyList_New(0);
    PyObject *vsizes = PyList_New(0), *vpositions = PyList_New(0), *headers = PyList_New(0);
    PyObject *no_headers = PyTuple_New(0);
    PyObject *result = NULL;
    if (!offsets || !timestamps || !keys || !vsizes || !vpositions || !headers || !no_headers) goto error;

    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t length, ts_delta, off_delta, klen, vlen, nh;
        VARINT(length);
        Py_ssize_t rec_end = pos + length;
        if (length < 0 || rec_end > end)
            FAIL("record length %lld at %zd runs past the records (%zd bytes)", (long long)length, pos, end);
        pos += 1; /* attributes, unused */
        VARINT(ts_delta);
        VARINT(off_delta);
        VARINT(klen);
        PyObject *key;
        if (klen >= 0) {
            if (pos + klen > rec_end) FAIL("key of %lld bytes at %zd runs past its record", (long long)klen, pos);
            key = PyBytes_FromStringAndSize((const char *)buf + pos, klen);
            pos += klen;
        } else {
            key = Py_None;
            Py_INCREF(key);
        }
        if (append_new(keys, key) < 0) goto error;
        VARINT(vlen);
        Py_ssize_t vpos = pos;
        if (vlen > 0) pos += vlen;
        VARINT(nh);
        PyObject *hdrs;
        if (nh > 0) {
            hdrs = PyList_New(0);
            if (!hdrs) goto error;
            for (int64_t h = 0; h < nh; h++) {
                int64_t hk, hv;
                int rc = read_varint(buf, rec_end, &pos, &hk);
                if (rc < 0 || hk < 0 || pos + hk > rec_end) { Py_DECREF(hdrs); FAIL("header %lld of the record at %zd is malformed", (long long)h, vpos); }
                PyObject *hkey = PyUnicode_DecodeUTF8((const char *)buf + pos, hk, "replace");
                pos += hk;
                rc = read_varint(buf, rec_end, &pos, &hv);
                if (rc < 0 || !hkey || (hv >= 0 && pos + hv > rec_end)) { Py_XDECREF(hkey); Py_DECREF(hdrs); FAIL("header %lld of the record at %zd is malformed", (long long)h, vpos); }
                PyObject *hval;
                if (hv >= 0) { hval = PyBytes_FromStringAndSize((const char *)buf + pos, hv); pos += hv; }
                else { hval = Py_None; Py_INCREF(hval); }
                PyObject *pair = hval ? PyTuple_Pack(2, hkey, hval) : NULL;
                Py_DECREF(hkey);
                Py_XDECREF(hval);
                if (append_new(hdrs, pair) < 0) { Py_DECREF(hdrs); goto error; }
            }
            if (pos != rec_end) { Py_DECREF(hdrs); FAIL("headers end at %zd, record declared end %zd", pos, rec_end); }
        } else {
            if (nh < 0) FAIL("negative header count %lld", (long long)nh);
            if (pos != rec_end) FAIL("record fields run to %zd, past its declared end %zd", pos, rec_end);
            hdrs = no_headers;
            Py_INCREF(hdrs);
        }
        if (append_new(headers, hdrs) < 0) goto error;
        pos = rec_end;
        if (append_new(offsets, PyLong_FromLongLong(base_offset + off_delta)) < 0) goto error;
        if (append_new(timestamps, PyLong_FromLongLong(log_append ? max_ts : base_ts + ts_delta)) < 0) goto error;
        if (append_new(vsizes, PyLong_FromLongLong(vlen)) < 0) goto error;
        if (append_new(vpositions, PyLong_FromSsize_t(vpos)) < 0) goto error;
    }
    if (pos != end) FAIL("%zd bytes left after %zd records", end - pos, count);
    result = PyTuple_Pack(6, offsets, timestamps, keys, vsizes, vpositions, headers);
error:
    Py_XDECREF(offsets); Py_XDECREF(timestamps); Py_XDECREF(keys);
    Py_XDECREF(vsizes); Py_XDECREF(vpositions); Py_XDECREF(headers); Py_XDECREF(no_headers);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"decode_columns", decode_columns, METH_VARARGS,
     "decode_columns(records, count, base_offset, base_timestamp, max_timestamp, log_append) -> "
     "(offsets, timestamps, keys, value_sizes, value_positions, headers)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_decode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__decode(void) { return PyModule_Create(&module); }
