"""The image tests' build, started in the background as soon as the session knows it collected them.

Building the base and both images takes minutes (mmdebstrap, two ``podman build``s, PySpark's wheel), so
it runs as its own process (tests/deploy/imagebuild.py, output in its work dir's build.log) from the end
of collection, while the rest of the suite runs; the image tests are moved to the end of the session and
wait for the image they need (the ``images`` fixture). At the session's end the build is stopped if
still running, and its storage (every image and container) and work dir removed. On pytest-xdist the
controller builds (tests/conftest.py's ``pytest_xdist_node_collection_finished``), once for every worker,
and removes it after the last worker ends; a worker's tests wait on its marker files.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import imagebuild  # noqa: E402

_build_key = pytest.StashKey[dict]()


def _is_image_test(item) -> bool:
    return imagebuild.is_image_test(item.path)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The image tests last: they wait on the background build, which the rest of the suite overlaps."""
    items[:] = [i for i in items if not _is_image_test(i)] + [i for i in items if _is_image_test(i)]


def pytest_collection_finish(session):
    if session.config.option.collectonly or not any(_is_image_test(i) for i in session.items):
        return
    state = {"proc": None, "workdir": None, "skip": imagebuild.missing_reason()}
    session.config.stash[_build_key] = state
    if state["skip"]:
        return
    shared = getattr(session.config, "workerinput", {}).get(imagebuild.WORKERINPUT_KEY)
    if shared:  # an xdist worker: the controller builds, once for every worker (tests/conftest.py)
        state["workdir"] = Path(shared)
        return
    state["workdir"] = Path(tempfile.mkdtemp(prefix="compaction-monitor-images-"))
    state["proc"] = imagebuild.start(state["workdir"])


def pytest_sessionfinish(session):
    state = session.config.stash.get(_build_key, None)
    if not state or state["proc"] is None:  # nothing built here (or an xdist worker: the controller's build)
        return
    imagebuild.finish(state["proc"], state["workdir"], Path(session.config.rootpath) / "test-artifacts")


class Images:
    """The session's image build: ``image(stage)`` waits for it, ``podman`` runs with its storage."""

    def __init__(self, state: dict):
        self.state = state
        self.podman = imagebuild.Podman(state["workdir"])

    def image(self, stage: str) -> str:
        try:
            return imagebuild.wait_stage(self.state["workdir"], stage, self.state["proc"])
        except (RuntimeError, TimeoutError) as exc:
            why = str(exc)
        pytest.fail(why, pytrace=False)


@pytest.fixture(scope="session")
def images(request) -> Images:
    state = request.config.stash.get(_build_key, None)
    if state is None:
        pytest.skip("the image build starts only when the image tests are collected")
    if state["skip"]:
        pytest.skip(f"images not built: {state['skip']}")
    return Images(state)
