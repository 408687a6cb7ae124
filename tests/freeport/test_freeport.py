"""freeport.free_port: ports below the kernel's ephemeral range (where outgoing connections take
their source ports, and took a port the 3-broker cluster was about to bind on two xdist workers), free when
handed out, never the same twice in a process, and a seeded ``random`` (TEST_SEED) does not choose them."""

from __future__ import annotations

import random
import socket

import freeport as broker


def test_ports_are_free_below_the_ephemeral_range_and_not_repeated():
    top = broker._ephemeral_start()
    ports = [broker.free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert all(broker.LOWEST_PORT <= p < top for p in ports), (top, ports)
    for p in ports[:5]:  # free: a listener binds it
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))


def test_a_taken_port_is_not_handed_out_and_the_seed_does_not_choose(monkeypatch):
    busy, free = broker.free_port(), broker.free_port()
    draws = iter([busy, busy, free])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", busy))
        taken.listen()
        monkeypatch.setattr(broker, "_DRAW", type("D", (), {"randrange": lambda self, a, b: next(draws)})())
        monkeypatch.setattr(broker, "_HANDED_OUT", set())
        assert broker.free_port() == free
    monkeypatch.undo()
    assert isinstance(broker._DRAW, random.SystemRandom)  # two workers seeded alike draw apart


def test_no_room_below_the_range_falls_back_to_the_kernel(monkeypatch):
    kernels = broker._ephemeral_start()
    monkeypatch.setattr(broker, "_ephemeral_start", lambda: broker.LOWEST_PORT + 10)
    assert broker.free_port() >= kernels
