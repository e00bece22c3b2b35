"""The lane's request parser (``memlite/http/lane.py``'s ``parse``) against h11, the
parser Hypercorn uses: whatever the lane takes, h11 must read the same way (target,
headers, and whether the connection closes after the answer)."""

from __future__ import annotations

import random

import pytest

GOOD = (b"GET /api/search?q=parser+crash&mode=fts HTTP/1.1\r\nHost: 127.0.0.1:37888\r\n"
        b"Authorization: Bearer abc\r\nAccept:*/*\r\nX-Empty:\r\nConnection: Keep-Alive\r\n"
        b"\r\n")


def _h11_reads(data: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bool] | None:
    """What h11 (Hypercorn's parser) reads of ``data``: a whole bodyless GET's target and
    headers, and whether h11 closes the connection after answering it; or None."""
    import h11

    connection = h11.Connection(h11.SERVER)
    connection.receive_data(data)
    try:
        request, end = connection.next_event(), connection.next_event()
        after = connection.next_event()
    except h11.RemoteProtocolError:
        return None
    if type(request) is not h11.Request or type(end) is not h11.EndOfMessage:
        return None
    if after not in (h11.NEED_DATA, h11.PAUSED) or connection.trailing_data[0]:
        return None  # more than one request
    connection.send(h11.Response(status_code=200, headers=[(b"content-length", b"0")]))
    connection.send(h11.EndOfMessage())
    return request.target, list(request.headers), connection.our_state is h11.MUST_CLOSE


def _lane_reads(data: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bool] | None:
    from memlite.http.lane import parse

    request = parse(data, 16 * 1024)
    return None if request is None else (request.target, request.headers, request.close)


@pytest.mark.parametrize("data", [
    GOOD,
    GOOD.replace(b"GET", b"get"), GOOD.replace(b"GET", b"HEAD"),
    GOOD.replace(b"HTTP/1.1", b"HTTP/1.0"), GOOD.replace(b"\r\n", b"\n"),
    b"\r\n" + GOOD, GOOD + b"GET", GOOD[:-2], GOOD.replace(b"Host: 127.0.0.1:37888\r\n", b""),
    GOOD.replace(b"Accept", b"Host"), GOOD.replace(b"Accept:*/*", b"Content-Length: 0"),
    GOOD.replace(b"Accept:*/*", b"Transfer-Encoding: chunked"),
    GOOD.replace(b"Accept:*/*", b"Expect: 100-continue"),
    GOOD.replace(b"Accept:*/*", b"Upgrade: websocket"),
    GOOD.replace(b"Keep-Alive", b"close"), GOOD.replace(b"Keep-Alive", b"keep-alive, Upgrade"),
    GOOD.replace(b"Accept:*/*\r\n", b"Accept:*/*\r\n folded\r\n"),
    GOOD.replace(b"Accept:", b"Accept :"), GOOD.replace(b"*/*", b"a\x01b"),
    GOOD.replace(b"*/*", b"a\x7fb"), GOOD.replace(b"/api/search", b"/api /search"),
    GOOD.replace(b"*/*", b"caf\xc3\xa9 \t x"), GOOD.replace(b"Accept", b"Acc\xe9pt"),
    GOOD.replace(b"q=parser", b"q=%ff%fe"),
])
def test_the_lane_takes_only_what_h11_reads_the_same(data):
    ours = _lane_reads(data)
    if ours is not None:
        assert _h11_reads(data) == ours
    assert (ours is not None) == (data in (GOOD, GOOD.replace(b"*/*", b"caf\xc3\xa9 \t x"),
                                           GOOD.replace(b"q=parser", b"q=%ff%fe"),
                                           GOOD.replace(b"Keep-Alive", b"close")))
    assert _lane_reads(GOOD)[2] is False
    assert _lane_reads(GOOD.replace(b"Keep-Alive", b"keep-alive , CLOSE"))[2] is True


def test_the_lane_parser_against_h11_on_mutations():
    """Random byte mutations of a good request: whatever the lane takes, h11 reads the
    same way."""
    alphabet = b"\r\n \t:,;=?/%\x00\x01\x7f\x80\xffaAzZ09-_Hostkeep-aliveGETHTTP/1.1close"
    rng = random.Random(15)
    taken = 0
    for _ in range(20_000):
        data = bytearray(GOOD)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            action = rng.random()
            if action < 0.4:
                data[at] = rng.choice(alphabet)
            elif action < 0.7:
                data.insert(at, rng.choice(alphabet))
            else:
                del data[at]
        data = bytes(data)
        ours = _lane_reads(data)
        if ours is not None:
            taken += 1
            assert _h11_reads(data) == ours, data
    assert taken > 1000  # the mutations kept many requests of the lane's form
