import pytest

from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len


@pytest.mark.parametrize(
    "text,tokens",
    [("128k", 131072), ("128K", 131072), ("131072", 131072), ("1m", 1048576), (" 8k ", 8192), (4096, 4096)],
)
def test_ctx_len_forms(text, tokens):
    assert parse_ctx_len(text) == tokens


@pytest.mark.parametrize("text", ["12q", "-5", "0", "", "k", "1.5k", "128kb", "0k"])
def test_ctx_len_rejects(text):
    with pytest.raises(WorkloadError, match="context length"):
        parse_ctx_len(text)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(q_len=0), "q_len"),
        (dict(heads=0), "heads"),
        (dict(page_size=0), "page_size"),
        (dict(dtype="int8"), "dtype"),
        (dict(tree_mask="dag"), "tree_mask"),
        (dict(batch=2, ctx_lens=(5,)), "ctx_lens"),
        (dict(ctx_len=0), "context length"),
    ],
)
def test_workload_rejects(kw, match):
    with pytest.raises(WorkloadError, match=match):
        VerifyWorkload(**kw)


def test_workload_derived_sizes_and_roundtrip():
    w = VerifyWorkload(ctx_len=1000, batch=2, ctx_lens=(1000, 37))
    assert w.head_dim == 576 and w.v_dim == 512 and w.token_bytes == 1152
    assert w.kv_lens == (1009, 46)
    import json

    assert VerifyWorkload.from_dict(json.loads(w.to_json())) == w
    assert w.to_dict() == json.loads(w.to_json()) and w.to_dict()["ctx_lens"] == [1000, 37]  # JSON types
    assert VerifyWorkload.from_dict(w.to_dict()) == w and VerifyWorkload().to_dict()["ctx_lens"] is None
    with pytest.raises(WorkloadError, match="unknown workload fields: bogus"):
        VerifyWorkload.from_dict({"bogus": 1})
