import pytest

from monitor.kafka.record import codecs
from monitor.kafka.record.varint import VarintError, encode_varint, read_varint


@pytest.mark.parametrize("n", [0, 1, -1, 63, -64, 64, 300, -300, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)])
def test_varint_round_trip(n):
    data = encode_varint(n) + b"\xff"
    assert read_varint(data, 0) == (n, len(data) - 1)


def test_minus_one_is_one_byte():
    assert encode_varint(-1) == b"\x01"


def test_overlong_varint():
    with pytest.raises(VarintError):
        read_varint(b"\xff" * 11, 0)


@pytest.mark.parametrize("codec", [codecs.NONE, codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD])
def test_codec_round_trip(codec):
    data = b"kafka compaction " * 1000
    assert codecs.decompress(codec, codecs.compress(codec, data)) == data


def test_raw_snappy_and_zstd_without_content_size():
    import cramjam

    data = b"raw snappy from a non-Java client " * 50
    assert codecs.decompress(codecs.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data
    c = cramjam.zstd.Compressor()
    c.compress(data)
    streamed = bytes(c.finish())  # streaming frame: no content size in the header
    assert codecs.decompress(codecs.ZSTD, streamed) == data


@pytest.mark.parametrize("codec", [codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD, 7])
def test_bad_compressed_data(codec):
    with pytest.raises(codecs.CodecError):
        codecs.decompress(codec, b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\xffjunk" if codec == codecs.SNAPPY else b"not compressed at all")
