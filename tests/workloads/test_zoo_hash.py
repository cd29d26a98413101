"""suite.workloads.zoo_hash: a zoo workload's content hash read from the on-disk cache without
building the workload (what a fully cached `suite reproduce` needs, issue 44)."""

import suite.workloads as W


def _new_process(monkeypatch):
    monkeypatch.setattr(W, "_HASHES", None)
    monkeypatch.setattr(W, "_CACHE", {})


def test_zoo_hash_is_the_built_workloads_hash_and_builds_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SUITE_NO_WORKLOAD_CACHE", raising=False)
    _new_process(monkeypatch)
    for name in ("resnet-18-cifar", "gpt2@seq512"):  # a registered name and a family pattern
        assert W.zoo_hash(name) is None  # nothing cached yet: the caller builds it
        built = W._zoo_get(name).content_hash()  # building it caches the hash on disk
        _new_process(monkeypatch)
        assert W.zoo_hash(name) == built
        assert name not in W._CACHE  # read from the file, not built
    assert W.zoo_hash("no-such-workload") is None


def test_zoo_hash_is_none_when_the_cache_is_off(tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path))
    _new_process(monkeypatch)
    W._zoo_get("cifar10-quick").content_hash()
    monkeypatch.setenv("SUITE_NO_WORKLOAD_CACHE", "1")
    _new_process(monkeypatch)
    assert W.zoo_hash("cifar10-quick") is None
