/*
 * The record decode loop of monitor/kafka/record/v2.py (_decode_columns) in C: the same fields, the same
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
#include <string.h>

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

#define MIN_RECORD_BYTES 7

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

/* One record's fields, walked and checked once for both decoders below. */
typedef struct {
    int64_t ts_delta, off_delta, klen, vlen, nh;
    Py_ssize_t tpos, kpos, vpos, hpos, end; /* tpos: the key's length varint, where the record's tail begins */
} record_t;

/* 0 and *ppos at the record's end, or -1 with a ValueError saying what is wrong and where. */
static int walk_record(const unsigned char *buf, Py_ssize_t end, Py_ssize_t *ppos, record_t *r) {
    Py_ssize_t pos = *ppos;
    int64_t length;
    VARINT(length);
    Py_ssize_t rec_end = pos + length;
    if (length < 0 || rec_end > end)
        FAIL("record length %lld at %zd runs past the records (%zd bytes)", (long long)length, pos, end);
    pos += 1; /* attributes, unused */
    VARINT(r->ts_delta);
    VARINT(r->off_delta);
    r->tpos = pos;
    VARINT(r->klen);
    r->kpos = pos;
    if (r->klen >= 0) {
        if (pos + r->klen > rec_end) FAIL("key of %lld bytes at %zd runs past its record", (long long)r->klen, pos);
        pos += r->klen;
    }
    VARINT(r->vlen);
    r->vpos = pos;
    if (r->vlen > 0) pos += r->vlen;
    VARINT(r->nh);
    r->hpos = pos;
    if (r->nh > 0) {
        for (int64_t h = 0; h < r->nh; h++) {
            int64_t hk, hv;
            int rc = read_varint(buf, rec_end, &pos, &hk);
            if (rc < 0 || hk < 0 || pos + hk > rec_end) FAIL("header %lld of the record at %zd is malformed", (long long)h, r->vpos);
            pos += hk;
            rc = read_varint(buf, rec_end, &pos, &hv);
            if (rc < 0 || (hv >= 0 && pos + hv > rec_end)) FAIL("header %lld of the record at %zd is malformed", (long long)h, r->vpos);
            if (hv > 0) pos += hv;
        }
        if (pos != rec_end) FAIL("headers end at %zd, record declared end %zd", pos, rec_end);
    } else {
        if (r->nh < 0) FAIL("negative header count %lld", (long long)r->nh);
        if (pos > rec_end) FAIL("record fields run to %zd, past its declared end %zd", pos, rec_end);
        if (pos < rec_end) FAIL("record fields end at %zd, %zd byte(s) before its declared end %zd", pos, rec_end - pos, rec_end);
    }
    r->end = rec_end;
    *ppos = rec_end;
    return 0;
error:
    return -1;
}

/* A checked record's headers as a list of (key str, value bytes or None). */
static PyObject *record_headers(const unsigned char *buf, const record_t *r) {
    PyObject *hdrs = PyList_New(0);
    Py_ssize_t pos = r->hpos;
    for (int64_t h = 0; hdrs && h < r->nh; h++) {
        int64_t hk = 0, hv = -1;  /* set by read_varint: the record was checked; initialised for the compiler */
        read_varint(buf, r->end, &pos, &hk);
        PyObject *hkey = PyUnicode_DecodeUTF8((const char *)buf + pos, hk, "replace");
        pos += hk;
        read_varint(buf, r->end, &pos, &hv);
        PyObject *hval;
        if (hv >= 0) { hval = PyBytes_FromStringAndSize((const char *)buf + pos, hv); pos += hv; }
        else { hval = Py_None; Py_INCREF(hval); }
        PyObject *pair = (hkey && hval) ? PyTuple_Pack(2, hkey, hval) : NULL;
        Py_XDECREF(hkey);
        Py_XDECREF(hval);
        if (append_new(hdrs, pair) < 0) { Py_DECREF(hdrs); hdrs = NULL; }
    }
    return hdrs;
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
        record_t r;
        if (walk_record(buf, end, &pos, &r) < 0) goto error;
        PyObject *key;
        if (r.klen >= 0) key = PyBytes_FromStringAndSize((const char *)buf + r.kpos, r.klen);
        else { key = Py_None; Py_INCREF(key); }
        if (append_new(keys, key) < 0) goto error;
        PyObject *hdrs;
        if (r.nh > 0) hdrs = record_headers(buf, &r);
        else { hdrs = no_headers; Py_INCREF(hdrs); }
        if (append_new(headers, hdrs) < 0) goto error;
        if (append_new(offsets, PyLong_FromLongLong(base_offset + r.off_delta)) < 0) goto error;
        if (append_new(timestamps, PyLong_FromLongLong(log_append ? max_ts : base_ts + r.ts_delta)) < 0) goto error;
        if (append_new(vsizes, PyLong_FromLongLong(r.vlen)) < 0) goto error;
        if (append_new(vpositions, PyLong_FromSsize_t(r.vpos)) < 0) goto error;
    }
    if (pos != end) FAIL("%zd bytes left after %zd records", end - pos, count);
    result = PyTuple_Pack(6, offsets, timestamps, keys, vsizes, vpositions, headers);
error:
    Py_XDECREF(offsets); Py_XDECREF(timestamps); Py_XDECREF(keys);
    Py_XDECREF(vsizes); Py_XDECREF(vpositions); Py_XDECREF(headers); Py_XDECREF(no_headers);
    PyBuffer_Release(&view);
    return result;
}

/*
 * XXH64 (xxHash, 64 bit), as Spark's xxhash64() computes it on binary with seed 42: a key hash that
 * the Spark side of the audit reproduces for inputs decoded in the JVM (dumps, a live topic).
 */
#define P1 11400714785074694791ULL
#define P2 14029467366897019727ULL
#define P3 1609587929392839161ULL
#define P4 9650029242287828579ULL
#define P5 2870177450012600261ULL
static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t xxh_round(uint64_t acc, uint64_t in) { acc += in * P2; acc = rotl64(acc, 31); return acc * P1; }
static inline uint64_t xxh_merge(uint64_t acc, uint64_t v) { acc ^= xxh_round(0, v); return acc * P1 + P4; }

static uint64_t xxh64(const unsigned char *p, size_t len, uint64_t seed) {
    const unsigned char *end = p + len;
    uint64_t h;
    if (len >= 32) {
        const unsigned char *limit = end - 32;
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        do {
            v1 = xxh_round(v1, rd64(p)); v2 = xxh_round(v2, rd64(p + 8));
            v3 = xxh_round(v3, rd64(p + 16)); v4 = xxh_round(v4, rd64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxh_merge(h, v1); h = xxh_merge(h, v2); h = xxh_merge(h, v3); h = xxh_merge(h, v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    while (p + 8 <= end) { h ^= xxh_round(0, rd64(p)); h = rotl64(h, 27) * P1 + P4; p += 8; }
    if (p + 4 <= end) { h ^= (uint64_t)rd32(p) * P1; h = rotl64(h, 23) * P2 + P3; p += 4; }
    while (p < end) { h ^= (*p) * P5; h = rotl64(h, 11) * P1; p++; }
    h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32;
    return h;
}

static PyObject *py_xxh64(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long seed = 42;
    if (!PyArg_ParseTuple(args, "y*|K", &view, &seed)) return NULL;
    uint64_t h = xxh64((const unsigned char *)view.buf, (size_t)view.len, seed);
    PyBuffer_Release(&view);
    return PyLong_FromLongLong((long long)h);
}

/*
 * The same records as decode_columns, into fixed-width arrays instead of Python objects: what bulk scans
 * turn into numpy / Arrow columns without a Python object per record. Returns bytes objects holding
 * native int64 offsets, timestamps and key hashes (XXH64 seed 42; 42 for a null key, as Spark), int32
 * key and value sizes (-1 for null), the keys back to back, and int32 tail sizes: the bytes from a record's
 * key length varint to its end, which a clean copies unchanged (the cleaner simulation sizes a rewritten
 * batch from them, monitor/model/cleanarrays.py). Headers are checked, not kept.
 */
/* 1 when every header key of a checked record is UTF-8 (ASCII at once; else Python's strict decoder). */
static int header_keys_utf8(const unsigned char *buf, const record_t *r) {
    Py_ssize_t pos = r->hpos;
    for (int64_t h = 0; h < r->nh; h++) {
        int64_t hk = 0, hv = 0; /* walk_record checked these varints */
        read_varint(buf, r->end, &pos, &hk);
        int ascii = 1;
        for (Py_ssize_t i = 0; i < hk; i++) if (buf[pos + i] & 0x80) { ascii = 0; break; }
        if (!ascii) {
            PyObject *s = PyUnicode_DecodeUTF8((const char *)buf + pos, hk, "strict");
            if (s == NULL) { PyErr_Clear(); return 0; }
            Py_DECREF(s);
        }
        pos += hk;
        read_varint(buf, r->end, &pos, &hv);
        if (hv > 0) pos += hv;
    }
    return 1;
}

static PyObject *decode_arrays(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count;
    long long base_offset, base_ts, max_ts;
    int log_append;
    if (!PyArg_ParseTuple(args, "y*nLLLp", &view, &count, &base_offset, &base_ts, &max_ts, &log_append))
        return NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len, pos = 0, keys_len = 0;
    PyObject *result = NULL, *keys = NULL;
    /* the smallest record is 7 bytes (a length and six one-byte fields): a count past end / 7 cannot hold,
       so the arrays below are never sized by a count read from the file beyond what its bytes allow */
    if (count < 0 || count > end / MIN_RECORD_BYTES) { PyErr_Format(PyExc_ValueError, "record count %zd does not fit %zd bytes", count, end); PyBuffer_Release(&view); return NULL; }
    PyObject *o_off = PyBytes_FromStringAndSize(NULL, count * 8), *o_ts = PyBytes_FromStringAndSize(NULL, count * 8);
    PyObject *o_hash = PyBytes_FromStringAndSize(NULL, count * 8), *o_ks = PyBytes_FromStringAndSize(NULL, count * 4);
    PyObject *o_vs = PyBytes_FromStringAndSize(NULL, count * 4), *o_tail = PyBytes_FromStringAndSize(NULL, count * 4);
    Py_ssize_t *kstart = PyMem_Malloc((count + 1) * sizeof(Py_ssize_t));
    if (!o_off || !o_ts || !o_hash || !o_ks || !o_vs || !o_tail || !kstart) { PyErr_NoMemory(); goto error; }
    int64_t *offs = (int64_t *)PyBytes_AS_STRING(o_off), *tss = (int64_t *)PyBytes_AS_STRING(o_ts);
    int64_t *hashes = (int64_t *)PyBytes_AS_STRING(o_hash);
    int32_t *ks = (int32_t *)PyBytes_AS_STRING(o_ks), *vs = (int32_t *)PyBytes_AS_STRING(o_vs);
    int32_t *tails = (int32_t *)PyBytes_AS_STRING(o_tail);

    for (Py_ssize_t i = 0; i < count; i++) {
        record_t r;
        if (walk_record(buf, end, &pos, &r) < 0) goto error;
        if (r.klen >= 0) {
            hashes[i] = (int64_t)xxh64(buf + r.kpos, (size_t)r.klen, 42);
            kstart[i] = r.kpos;
            keys_len += r.klen;
        } else {
            hashes[i] = 42;
            kstart[i] = -1;
        }
        offs[i] = base_offset + r.off_delta;
        tss[i] = log_append ? max_ts : base_ts + r.ts_delta;
        ks[i] = (int32_t)r.klen;
        vs[i] = (int32_t)(r.vlen < 0 ? -1 : r.vlen);
        /* the tail (key, value, headers) as a clean writes it again: the same bytes, unless a header key is
           not UTF-8 (Kafka writes back the String it decoded, replacement characters and all): -1 then */
        tails[i] = (r.nh > 0 && !header_keys_utf8(buf, &r)) ? -1 : (int32_t)(r.end - r.tpos);
    }
    if (pos != end) FAIL("%zd bytes left after %zd records", end - pos, count);
    keys = PyBytes_FromStringAndSize(NULL, keys_len);
    if (!keys) goto error;
    char *kp = PyBytes_AS_STRING(keys);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (ks[i] > 0) { memcpy(kp, buf + kstart[i], ks[i]); kp += ks[i]; }
    }
    result = PyTuple_Pack(7, o_off, o_ts, o_hash, o_ks, o_vs, keys, o_tail);
error:
    Py_XDECREF(o_off); Py_XDECREF(o_ts); Py_XDECREF(o_hash); Py_XDECREF(o_ks); Py_XDECREF(o_vs); Py_XDECREF(keys);
    Py_XDECREF(o_tail);
    PyMem_Free(kstart);
    PyBuffer_Release(&view);
    return result;
}

/*
 * The smallest and largest of the native int64 values in a buffer that are >= floor, or None when
 * none is: an offset or timestamp column's range without a Python int per value (inspect --stats).
 */
static PyObject *int64_range(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long floor_ = 0;
    if (!PyArg_ParseTuple(args, "y*|L", &view, &floor_)) return NULL;
    const int64_t *v = (const int64_t *)view.buf;
    Py_ssize_t n = view.len / 8;
    int found = 0;
    int64_t lo = 0, hi = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t x;
        memcpy(&x, v + i, 8);
        if (x < floor_) continue;
        if (!found) { lo = hi = x; found = 1; }
        else if (x < lo) lo = x;
        else if (x > hi) hi = x;
    }
    PyBuffer_Release(&view);
    if (!found) Py_RETURN_NONE;
    return Py_BuildValue("(LL)", (long long)lo, (long long)hi);
}

/* bytes of the zigzag varint of v (Java long arithmetic: v as DefaultRecord writes it) */
static inline int zz_size(int64_t v) {
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    int n = 1;
    while (z >= 0x80) { z >>= 7; n++; }
    return n;
}

static inline char *zz_put(char *w, int64_t v) {
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (z >= 0x80) { *w++ = (char)((z & 0x7F) | 0x80); z >>= 7; }
    *w++ = (char)z;
    return w;
}

/*
 * The records section a clean writes for a batch's kept records (monitor/model/cleanarrays.py,
 * NumpyOps.splice; encode.splice_records is the rule a record at a time): each kept record's new head
 * (length, attributes 0, timestamp delta against base_ts, offset delta against base_offset) and its
 * tail copied from the decompressed section. The records' places in the section follow from their
 * sizes (deltas against the batch's own base timestamp, a CreateTime batch's); None when they do not
 * add up to the section (a LogAppendTime batch) or a tail is not a copy (-1). offsets and timestamps
 * native int64, tails native int32, keep one byte a record (nonzero: kept) or None (all kept).
 */
static PyObject *splice(PyObject *self, PyObject *args) {
    Py_buffer section, offsets, timestamps, tails;
    PyObject *keep_obj;
    long long base_offset, base_ts, batch_base_ts;
    if (!PyArg_ParseTuple(args, "y*y*y*y*OLLL", &section, &offsets, &timestamps, &tails, &keep_obj,
                          &base_offset, &base_ts, &batch_base_ts)) return NULL;
    Py_buffer keep = {0};
    int has_keep = keep_obj != Py_None;
    PyObject *out = NULL;
    int64_t *src = NULL;
    Py_ssize_t n = tails.len / 4;
    if (has_keep && PyObject_GetBuffer(keep_obj, &keep, PyBUF_SIMPLE) < 0) goto done;
    if (offsets.len / 8 != n || timestamps.len / 8 != n || (has_keep && keep.len != n)) {
        PyErr_SetString(PyExc_ValueError, "splice: offsets, timestamps, tails and keep differ in length");
        goto done;
    }
    if (n == 0) { out = Py_None; Py_INCREF(out); goto done; }
    src = PyMem_Malloc(sizeof(int64_t) * n);
    if (src == NULL) { PyErr_NoMemory(); goto done; }
    int64_t at = 0, total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t t;
        int64_t o, ts;
        memcpy(&t, (const char *)tails.buf + 4 * i, 4);
        memcpy(&o, (const char *)offsets.buf + 8 * i, 8);
        memcpy(&ts, (const char *)timestamps.buf + 8 * i, 8);
        if (t < 0) { out = Py_None; Py_INCREF(out); goto done; }
        int64_t od = (int64_t)((uint64_t)o - (uint64_t)base_offset);
        int64_t body = 1 + zz_size(od) + zz_size((int64_t)((uint64_t)ts - (uint64_t)batch_base_ts)) + t;
        at += zz_size(body) + body;
        src[i] = at - t;
        if (has_keep && !((const char *)keep.buf)[i]) continue;
        int64_t nbody = 1 + zz_size(od) + zz_size((int64_t)((uint64_t)ts - (uint64_t)base_ts)) + t;
        total += zz_size(nbody) + nbody;
    }
    if (at != section.len) { out = Py_None; Py_INCREF(out); goto done; }
    out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL) goto done;
    char *w = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (has_keep && !((const char *)keep.buf)[i]) continue;
        int32_t t;
        int64_t o, ts;
        memcpy(&t, (const char *)tails.buf + 4 * i, 4);
        memcpy(&o, (const char *)offsets.buf + 8 * i, 8);
        memcpy(&ts, (const char *)timestamps.buf + 8 * i, 8);
        int64_t od = (int64_t)((uint64_t)o - (uint64_t)base_offset);
        int64_t td = (int64_t)((uint64_t)ts - (uint64_t)base_ts);
        w = zz_put(w, 1 + zz_size(od) + zz_size(td) + t);
        *w++ = 0;  /* attributes: unused, 0 */
        w = zz_put(w, td);
        w = zz_put(w, od);
        memcpy(w, (const char *)section.buf + src[i], (size_t)t);
        w += t;
    }
done:
    PyMem_Free(src);
    if (has_keep && keep.obj != NULL) PyBuffer_Release(&keep);
    PyBuffer_Release(&section);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&timestamps);
    PyBuffer_Release(&tails);
    return out;
}

static PyMethodDef methods[] = {
    {"decode_columns", decode_columns, METH_VARARGS,
     "decode_columns(records, count, base_offset, base_timestamp, max_timestamp, log_append) -> "
     "(offsets, timestamps, keys, value_sizes, value_positions, headers)"},
    {"decode_arrays", decode_arrays, METH_VARARGS,
     "decode_arrays(records, count, base_offset, base_timestamp, max_timestamp, log_append) -> (offsets int64, "
     "timestamps int64, key_hashes int64, key_sizes int32, value_sizes int32, keys, tail_sizes int32) as bytes"},
    {"xxh64", py_xxh64, METH_VARARGS, "xxh64(data, seed=42) -> signed 64-bit XXH64, as Spark's xxhash64"},
    {"int64_range", int64_range, METH_VARARGS,
     "int64_range(int64s, floor=0) -> (min, max) of the native int64 values >= floor, or None"},
    {"splice", splice, METH_VARARGS,
     "splice(section, offsets int64, timestamps int64, tails int32, keep bytes|None, base_offset, base_ts, "
     "batch_base_ts) -> the kept records' section as a clean writes it, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_decode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__decode(void) { return PyModule_Create(&module); }
