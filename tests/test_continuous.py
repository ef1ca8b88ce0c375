"""The token-level engine (ccl.policy.torch_continuous): prefill buckets by hand, and greedy
outputs equal to the lock-step engine's with the embedded model, through slot refill, buffer
relayouts and shrinking."""
import pytest

from ccl.episode.rollout import rollout
from ccl.episode.runtime import Episode
from ccl.policy.base import GenConfig, ModelPolicy
from ccl.policy.load import load_backend
from ccl.policy.torch_continuous import ContinuousDecoder, buckets
from scripts.model_store import model_store

MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def backend():
    return load_backend(model_store(), MODEL, "torch")


def test_buckets_keep_padding_under_the_bound():
    # sorted: 10, 80, 85, 90, 500. 10 beside 80 would pad 70 of 160 tokens (44%); 80, 85, 90 pad
    # 15 of 270 (6%); 500 beside them would pad 1245 of 2000
    assert buckets([10, 80, 85, 500, 90], 0.15, 4096) == [[0], [1, 2, 4], [3]]
    # the token cap splits equal lengths; a single longer one stands alone
    assert buckets([100] * 5, 0.15, 250) == [[0, 1], [2, 3], [4]]
    assert buckets([300], 0.15, 250) == [[0]]
    assert buckets([], 0.15, 100) == []


def conversations() -> list[list[dict]]:
    asks = ("What is 2+2?", "Name a colour.", "Say hello in French, please.", "Count to five.")
    return [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": q}] for q in asks]


SEEDS = [11, 12, 13, 14]  # one per conversation: a sampling test notices swapped generators


def lockstep(b, gen: GenConfig, turns: int = 2) -> list[list[str]]:
    convs, states, texts = conversations(), [{} for _ in range(4)], [[] for _ in range(4)]
    for _ in range(turns):
        outs = b.generate(states, [b.render(c) for c in convs], gen, SEEDS)
        for c, o, t in zip(convs, outs, texts):
            t.append(o.text)
            c += [{"role": "assistant", "content": o.text}, {"role": "user", "content": "Once more?"}]
    return texts


def continuous(dec: ContinuousDecoder, b, turns: int = 2) -> tuple[list[list[str]], dict]:
    """Four conversations through ``dec``; each turn that ends is answered and resubmitted at once.
    Returns the texts per conversation and every output keyed by (conversation, turn)."""
    convs, states = conversations(), [{} for _ in range(4)]
    texts, outs = [[] for _ in range(4)], {}
    for i, c in enumerate(convs):
        dec.submit(i, states[i], b.render(c), SEEDS[i])
    while dec.busy():
        for i, o in dec.step():
            outs[(i, len(texts[i]))] = o
            texts[i].append(o.text)
            if len(texts[i]) < turns:
                convs[i] += [{"role": "assistant", "content": o.text}, {"role": "user", "content": "Once more?"}]
                dec.submit(i, states[i], b.render(convs[i]), SEEDS[i])
    return texts, outs


@pytest.mark.parametrize("slots, headroom", [(4, 256), (2, 3)])
def test_greedy_turns_equal_the_lockstep_engine(backend, slots, headroom):
    # two slots for four conversations: sequences wait, join mid-decode and the batch shrinks at
    # the end; headroom 3 forces a relayout every few tokens
    gen = GenConfig(max_new_tokens=12)
    dec = ContinuousDecoder(backend, gen, slots, headroom=headroom)
    got, outs = continuous(dec, backend)
    assert got == lockstep(backend, gen)
    assert all(outs[(i, 0)].prompt_tokens > 20 for i in range(4))  # first turns prefill the prompt
    assert all(outs[(i, 1)].prompt_tokens < 20 for i in range(4))  # second turns reuse the KV cache
    e = dec.summary()
    assert e["gflop_useful"] <= e["gflop_executed"] and 0 <= e["prefill_padding"] < 1
    assert 0 < e["decode_slot_use"] <= 1 and e["decode_tok_per_s"] > 0
    if headroom == 3:
        assert e["relayouts"] > 4


def test_sampling_follows_each_sequence_seed(backend):
    # each sequence draws from its own generator, whatever joins the batch beside it: the same
    # seeds give the lock-step engine's samples, and other seeds other samples
    gen = GenConfig(max_new_tokens=8, temperature=0.9, top_p=0.95)
    got = continuous(ContinuousDecoder(backend, gen, 2), backend, turns=1)[0]
    assert got == lockstep(backend, gen, turns=1)
    assert len({t[0] for t in got}) > 1


def test_a_turn_may_end_on_its_first_token(backend):
    gen = GenConfig(max_new_tokens=1)
    got, outs = continuous(ContinuousDecoder(backend, gen, 4), backend)
    assert got == lockstep(backend, gen) and all(o.new_tokens == 1 for o in outs.values())


def test_headroom_must_leave_room_for_a_token(backend):
    with pytest.raises(ValueError, match="headroom 0"):
        ContinuousDecoder(backend, GenConfig(), 2, headroom=0)


@pytest.mark.slow  # about half a minute or more on 2 cores: CI runs it (.ci/run), the default suite does not
def test_rollout_transcripts_equal_the_lockstep_schedule(backend, smoke_data):
    from ccl.artifacts.jsonio import read_jsonl
    tasks = list(read_jsonl(smoke_data / "eval_id.jsonl"))[:6]
    gen = GenConfig(max_new_tokens=48)
    got = {}
    for cont in (False, True):
        policy = ModelPolicy(backend, gen, continuous=cont)
        eps: dict[str, Episode] = {t["id"]: ep for t, ep, _, _ in rollout(tasks, policy, batch_size=4)}
        got[cont] = {k: ep.messages for k, ep in eps.items()}, policy.stats.new_tokens, policy.stats.prompt_tokens
        assert (policy.stats.engine is not None) == cont
    assert got[True] == got[False]  # transcripts and token counts


def test_the_fewshot_head_is_prefilled_once(backend, smoke_data):
    """A+ prompts share the static head plus the worked examples: the backend prefills that
    text once and each fresh episode's first turn prefills only its own date, role and tools."""
    from ccl.artifacts.jsonio import read_jsonl
    from ccl.episode.prompt import system_prompt
    from ccl.episode.prompt_head import FEWSHOT, STATIC_HEAD
    tasks = list(read_jsonl(smoke_data / "eval_id.jsonl"))[:3]
    policy = ModelPolicy(backend, GenConfig(max_new_tokens=4), continuous=False)
    eps = [Episode(t, system=system_prompt(t, fewshot=True)) for t in tasks]
    memories = [policy.memory() for _ in eps]
    prompts = [policy._prompt(ep, m) for ep, m in zip(eps, memories)]
    heads = {m.backend["prefix"] for m in memories}
    assert len(heads) == 1 and next(iter(heads)).endswith(STATIC_HEAD + FEWSHOT)
    head = heads.pop()
    outs = backend.generate([m.backend for m in memories], prompts, policy.gen, [0, 1, 2])
    assert head in backend._prefixes
    for p, o in zip(prompts, outs):
        assert p.startswith(head)
        assert o.prompt_tokens == len(backend.tok(p[len(head):], add_special_tokens=False).input_ids)


def test_a_rewound_turn_keeps_exactly_the_prompts_cache(backend):
    """rewind=True (decision-point replay): when the turn ends the state holds the cache of the
    prompt alone, the same as a turn that generated one token, and the next prompt is an increment."""
    import torch
    prompt = backend.render([{"role": "user", "content": "Name three rivers of Europe."}])
    states = []
    for max_new in (24, 1):
        dec = ContinuousDecoder(backend, GenConfig(max_new_tokens=max_new), 2)
        st: dict = {}
        dec.submit("k", st, prompt, 0, rewind=True)
        while dec.busy():
            out = dec.step()
        assert out and out[0][1].new_tokens == max_new
        states.append(st)
    long, short = states
    n = len(backend.tok(prompt, add_special_tokens=False).input_ids)
    assert long["len"] == short["len"] == n and long["text"] == short["text"] == prompt
    for (k1, v1), (k2, v2) in zip(long["kv"], short["kv"]):
        torch.testing.assert_close(k1, k2)
        torch.testing.assert_close(v1, v2)
    dec = ContinuousDecoder(backend, GenConfig(max_new_tokens=4), 2)
    dec.submit("k", long, prompt + "The Danube.<|im_end|>\n", 0)  # a recorded reply continues the prompt
    assert dec.pending[0].inc == backend.tok("The Danube.<|im_end|>\n", add_special_tokens=False).input_ids
