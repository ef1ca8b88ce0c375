"""GRPO on episodes in the world (issue 41): the learner acts, the world answers, code scores.

Each step takes ``tasks_per_step`` fresh training-pool tasks and samples ``group_size`` whole episodes of
each from the current policy (temperature, top-p) through the project's rollout engine (the torch
continuous decoder over the model being trained, the shared prompt head cached; its cache is dropped
after every update). Every episode is scored three ways, whichever one the arm trains on, so the curves
of all arms can be read side by side:

- **sparse**: success under ``grpo.ruler``, 0/1 (``ccl.learn.reward``);
- **decomposed**: that ruler's criteria, weighted (``ccl.learn.reward``);
- **dense**: per turn, 1 when ``ccl.learn.turn_grade`` passes the turn *from a recoverable state*, else 0
  (the red team's safe form, ``experiments/reward_farming``: an honest stop after a permanent mistake is
  the right label but is not paid).

Advantages are normalised within each task's group (``grpo_loss.group_advantages``); the episode-level
designs credit every assistant token of an episode with its advantage, the dense design credits each
turn's tokens with that turn's advantage (``grpo_loss.turn_advantages``). The loss is TRL's (bnpo: token
mean over the batch) with a KL penalty to C, the frozen supervised reference (a second copy of C's
adapter, never updated). Groups whose rewards have no spread are left out of the update (DAPO's
dynamic-sampling filter, without its resampling): their advantages are all 0, so in TRL's loss they would
add only the KL term and their tokens to the normaliser, and on two cores their forward and backward
passes cost more than half of a step; the loss over the groups kept is TRL's. Dropout stays off (TRL's default ``disable_dropout``), so the sampling and the
scoring policy are the same function. An episode is re-tokenised with the trainer's packer
(``ccl.train.packing``, the pieces the backends tokenise), which may tokenise a sampled text differently
from the sampler's own token path; the loss scores the packer's tokens, the same ones SFT trained on.

Monitors, per step (``train_log.jsonl``): each design's reward mean and spread over the step's episodes,
ruler-2 success of the samples, the share of groups with zero spread under the trained reward (no
gradient from them), the KL to C, the clip share, tokens, seconds; every ``val_every`` steps (and at
the start and end), greedy episode success on a fixed slice of the validation pool and the share of
those episodes ``ccl.learn.hacking`` flags, with how many of the flagged ones ruler 2 passed. The last
step's samples are written out in full to be read.
"""
from __future__ import annotations

import dataclasses
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from ..config import register
from ..episode.rollout import rollout
from ..episode.runtime import Episode
from ..judge.rulers import REWARD_RULERS, judge_by
from ..policy.base import GenConfig, ModelPolicy
from ..records import Task
from ..vocabulary import RULER2, RULER3
from ..train.packing import Packed
from ..train.shared_head import target_logps
from .grpo_loss import group_advantages, grpo_loss, turn_advantages
from .hacking import FLAGS, flags
from .reward import episode_reward
from .turn_grade import grade_turn

REWARDS = ("sparse", "decomposed", "dense")
SAMPLERS = ("torch", "openvino")


@register
@dataclass(frozen=True)
class GrpoConfig:
    """params.yaml ``grpo``; the defaults are the paper profile's. Fixed before any GRPO run from TRL's
    defaults and the DeepSeekMath GRPO settings (temperature 1, KL 0.04, clip 0.2) and DPO's learning rate
    on this adapter; not tuned on any split (the validation curve is a monitor, never a selector: the
    final step's adapter is the arm's)."""

    group_size: int = 8  # G: episodes sampled per task
    tasks_per_step: int = 8
    steps: int = 32
    temperature: float = 1.0
    top_p: float = 1.0
    beta: float = 0.04  # KL coefficient, to C
    epsilon: float = 0.2  # clip range (inactive while iterations is 1: the ratio is then exactly 1)
    iterations: int = 1  # policy updates per sampled batch
    lr: float = 1e-6
    warmup: int = 2
    max_grad_norm: float = 1.0
    max_new_tokens: int = 128  # per assistant turn while sampling
    max_length: int = 2048  # tokens of an episode the loss reads; later turns are dropped (counted)
    micro_batch: int = 4  # episodes per forward/backward pass
    batch_size: int = 32  # rollout slots
    task_offset: int = 256  # the first training-pool task: past C's (distill.n) and DAgger's slices
    val_tasks: int = 32  # the first this many validation-pool tasks
    val_every: int = 8
    seed: int = 0
    # the engine that samples (and reads the validation slice): torch, the live model itself, or openvino,
    # the base graph with the LoRA loaded at run time after each update (ccl.policy.openvino_lora; its
    # agreement with torch: experiments/ov_lora_sampler). A run on the default records no sampler.
    sampler: str = "torch"
    # the ruler the reward reads (ccl.judge.rulers): ruler 3 (issue 57). The published arms trained under
    # ruler 2 (their params name it) and record no ruler, as they did before the setting existed.
    ruler: str = RULER3
    # screening (issue 59): an episode ccl.learn.hacking flags leaves its group before advantages are
    # computed, so a farmed success is never reinforced; a run without it records no such key
    screen_flagged: bool = False
    # the step after which the stage keeps the adapter (a point on the arm's curve); 0: none, unrecorded
    keep_at: int = 0

    def __post_init__(self) -> None:
        if self.ruler not in REWARD_RULERS:
            raise ValueError(f"grpo.ruler {self.ruler!r}: a reward reads one of {', '.join(REWARD_RULERS)}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"grpo.sampler {self.sampler!r}: valid samplers are {', '.join(SAMPLERS)}")
        if self.group_size < 2:
            raise ValueError(f"grpo.group_size {self.group_size}: a group needs 2 or more episodes to compare")
        if self.temperature <= 0:
            raise ValueError(f"grpo.temperature {self.temperature}: GRPO samples; use a temperature above 0")
        if not 0 <= self.keep_at <= self.steps:
            raise ValueError(f"grpo.keep_at {self.keep_at}: the step after which the adapter is kept, 0 (none) to "
                             f"steps ({self.steps})")
        if self.val_tasks < 1 or self.steps < 1:
            raise ValueError(f"grpo: steps ({self.steps}) and val_tasks ({self.val_tasks}) must be 1 or more")

    def record(self) -> dict:
        """The settings as a run's config.json writes them: the default sampler and ruler 2 (the ruler of
        the runs made before the ruler setting existed) are left out, so those runs keep their bytes."""
        out = dataclasses.asdict(self)
        if out["sampler"] == SAMPLERS[0]:
            del out["sampler"]
        if out["ruler"] == RULER2:
            del out["ruler"]
        for key in ("screen_flagged", "keep_at"):
            if not out[key]:
                del out[key]
        return out

    def step_tasks(self, pool: list[Task], step: int) -> list[Task]:
        """Step ``step``'s tasks: consecutive fresh slices of the pool from ``task_offset`` (no task twice)."""
        start = self.task_offset + step * self.tasks_per_step
        if start + self.tasks_per_step > len(pool):
            raise ValueError(f"grpo: {self.steps} steps x {self.tasks_per_step} tasks from task {self.task_offset} "
                             f"need {self.task_offset + self.steps * self.tasks_per_step} training-pool tasks; "
                             f"the pool has {len(pool)}")
        return pool[start:start + self.tasks_per_step]


@dataclass
class GroupSampler(ModelPolicy):
    """A model policy that samples ``group_size`` different episodes of one task: a turn's sampling seed
    includes the step and the episode's index within its task's group (the runtime's own seed depends only
    on the task and the turn, which would make every member of a group the same)."""

    step: int = 0
    index: dict[int, int] = field(default_factory=dict)  # id(episode) -> its index in the group
    _counts: Counter = field(default_factory=Counter)

    def start_step(self, step: int) -> None:
        self.step, self.index, self._counts = step, {}, Counter()

    def submit(self, dec, ep: Episode, memory, rewind: bool = False) -> None:
        if not ep.turns:  # a new episode: the next index of its task's group
            self.index[id(ep)] = self._counts[ep.task["id"]]
            self._counts[ep.task["id"]] += 1
        t0 = time.perf_counter()
        prompt = self._prompt(ep, memory)
        seed = zlib.crc32(f"{self.gen.seed}|{self.step}|{ep.task['id']}|{self.index[id(ep)]}|{len(ep.turns)}".encode())
        dec.submit((ep, memory), memory.backend, prompt, seed, rewind)
        self.stats.gen_seconds += time.perf_counter() - t0

    def act_batch(self, eps, memories):
        raise NotImplementedError("GRPO samples through a continuous decoder (torch or OpenVINO, full "
                                  "attention); this backend offers none, and lock-step turns would give every "
                                  "group member the same seed")


@dataclass(frozen=True)
class Scored:
    """One sampled episode and everything read off it."""

    task: Task
    index: int  # within its group
    episode: Episode
    sparse: float
    decomposed: float
    turn_rewards: tuple[float, ...]  # the dense design's, per assistant turn
    grades: tuple[str, ...]  # turn_grade's ``why`` per turn
    reasons: tuple[str, ...]  # the ruler's
    flags: tuple[str, ...]

    @property
    def dense(self) -> float:
        """The dense design's episode-level reading (for the curves): the mean turn reward."""
        return sum(self.turn_rewards) / len(self.turn_rewards) if self.turn_rewards else 0.0

    def reward(self, design: str) -> float:
        return {"sparse": self.sparse, "decomposed": self.decomposed, "dense": self.dense}[design]


def score(task: Task, index: int, ep: Episode, ruler: str = RULER3) -> Scored:
    record = ep.record()
    r = episode_reward(task, record, ruler)
    replay, rewards, why = Episode(task), [], []
    for turn in record["turns"]:
        g = grade_turn(task, replay, turn["text"], ruler)
        rewards.append(1.0 if g.passed and g.recoverable else 0.0)
        why.append(g.why)
        replay.step(turn["text"])
    return Scored(task, index, ep, r.sparse, r.decomposed, tuple(rewards), tuple(why), r.reasons, flags(task, record))


def token_advantages(group: list[Scored], design: str, packed: list[Packed]) -> list[list[float]]:
    """Per supervised token of each packed episode, its advantage: the episode's (sparse, decomposed) or
    its turn's (dense). Packing may have dropped trailing turns; their advantages go with them."""
    if design == "dense":
        per_turn = turn_advantages([list(s.turn_rewards) for s in group])
    else:
        per_turn = [[a] * len(s.turn_rewards) for s, a in zip(group, group_advantages([s.reward(design) for s in group]))]
    out = []
    for p, turns in zip(packed, per_turn):
        adv, turn, inside = [], -1, False
        for i in range(1, len(p.labels)):  # position 0 predicts nothing
            if p.labels[i] and not inside:
                turn += 1
            inside = p.labels[i]
            if p.labels[i]:
                adv.append(turns[turn])
        if turn + 1 != p.turns:  # every assistant turn is one span of targets; anything else would misalign
            raise ValueError(f"packed episode has {turn + 1} target spans for {p.turns} turns")
        out.append(adv)
    return out


def learner_parts(folder: Path, adapter: Path, device: str, cfg: GrpoConfig) -> tuple[Any, Any, GenConfig, Any]:
    """What a GRPO run starts from, after seeding torch with ``cfg.seed``: the model to train and its frozen
    reference (both loaded from ``adapter``, C's), the sampling settings and the optimizer."""
    from ..train.torch_trainer import load_adapter_for_training

    torch.manual_seed(cfg.seed)
    tm = load_adapter_for_training(folder, adapter, device)
    ref = load_adapter_for_training(folder, adapter, device)
    ref.model.eval()
    for param in ref.model.parameters():
        param.requires_grad_(False)
    gen = GenConfig(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p, seed=cfg.seed)
    opt = torch.optim.AdamW([q for q in tm.model.parameters() if q.requires_grad], lr=cfg.lr, weight_decay=0.0)
    return tm, ref, gen, opt


@dataclass
class Learner:
    """The model being trained, its frozen reference, the sampler over it and the optimizer."""

    tm: Any  # ccl.train.torch_trainer.TorchModel (peft; the "default" adapter trains)
    ref: Any  # the same, frozen: C
    sampler: GroupSampler
    opt: torch.optim.Optimizer
    cfg: GrpoConfig

    def pad(self) -> int:
        return self.tm.tok.pad_token_id if self.tm.tok.pad_token_id is not None else 0

    def logps(self, model, batch: list[Packed]) -> torch.Tensor:
        return target_logps(model, batch, self.pad(), self.tm.device, self.cfg.temperature)


def sample(learner: Learner, tasks: list[Task], step: int) -> list[list[Scored]]:
    """Every task's group of sampled episodes, scored, in task order and group index order."""
    G = learner.cfg.group_size
    learner.sampler.start_step(step)
    learner.sampler.backend.forget_prefixes()
    finished = list(rollout([t for t in tasks for _ in range(G)], learner.sampler, batch_size=learner.cfg.batch_size))
    groups: dict[str, list[Scored]] = {t["id"]: [] for t in tasks}
    for f in finished:
        groups[f.task["id"]].append(score(f.task, learner.sampler.index[id(f.episode)], f.episode, learner.cfg.ruler))
    return [sorted(groups[t["id"]], key=lambda s: s.index) for t in tasks]


def screen(group: list[Scored], on: bool) -> list[Scored]:
    """The group without the episodes ``ccl.learn.hacking`` flags, when screening is on; else the group."""
    return [s for s in group if not (on and s.flags)]


def update(learner: Learner, groups: list[list[Scored]], design: str, lr: float) -> dict:
    """One policy update (``iterations`` of them on the same samples) on the step's groups."""
    cfg, tm = learner.cfg, learner.tm
    rows: list[tuple[Packed, list[float]]] = []
    dropped = screened = 0
    for group in groups:
        kept = screen(group, cfg.screen_flagged)
        screened, group = screened + len(group) - len(kept), kept
        if len(group) < 2:  # nothing left to compare
            continue
        packed = [tm.pack(s.episode.messages, cfg.max_length) for s in group]
        advantages = token_advantages(group, design, packed)
        if not any(x for a in advantages for x in a):  # zero spread: DAPO's filter (see the module docstring)
            continue
        dropped += sum(p.truncated for p in packed)
        rows += [(p, a) for p, a in zip(packed, advantages) if a]
    if not rows:  # no group had spread: nothing to learn from this step, and no optimizer step
        return {"loss": None, "kl": None, "clipped": None, "grad_norm": None, "tokens": 0, "sequences": 0,
                "turns_dropped": 0, "updated": False, **_screened(cfg, screened)}
    rows.sort(key=lambda r: len(r[0].input_ids))
    micro = [rows[i:i + cfg.micro_batch] for i in range(0, len(rows), cfg.micro_batch)]
    total = sum(len(a) for _, a in rows)
    with torch.no_grad():
        ref = [learner.logps(learner.ref.model, [p for p, _ in mb]) for mb in micro]
        old = [learner.logps(tm.model, [p for p, _ in mb]) for mb in micro] if cfg.iterations > 1 else None
    for group_ in learner.opt.param_groups:
        group_["lr"] = lr
    params = [p for p in tm.model.parameters() if p.requires_grad]
    out = {"loss": 0.0, "kl": 0.0, "clipped": 0.0, "grad_norm": 0.0}
    for _ in range(cfg.iterations):
        loss = kl = clipped = 0.0
        for k, mb in enumerate(micro):
            logps = learner.logps(tm.model, [p for p, _ in mb])
            adv = torch.tensor([x for _, a in mb for x in a], dtype=logps.dtype, device=logps.device)
            parts = grpo_loss(logps, logps.detach() if old is None else old[k], ref[k], adv, cfg.beta,
                              cfg.epsilon, cfg.epsilon, total)
            parts.loss.backward()
            loss, kl, clipped = loss + float(parts.loss.detach()), kl + float(parts.kl), clipped + float(parts.clipped)
        norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm))
        learner.opt.step()
        learner.opt.zero_grad(set_to_none=True)
        out = {"loss": loss, "kl": kl / max(total, 1), "clipped": clipped / max(total, 1), "grad_norm": norm}
    return {**out, "tokens": total, "sequences": len(rows), "turns_dropped": dropped, "updated": True,
            **_screened(cfg, screened)}


def _screened(cfg: GrpoConfig, n: int) -> dict:
    """The step log's count of screened episodes, on a screening run only (earlier runs keep their bytes)."""
    return {"screened": n} if cfg.screen_flagged else {}


def step_record(step: int, groups: list[list[Scored]], design: str) -> dict:
    """The step's monitors from its samples (the update adds loss, KL, clip share, gradient norm)."""
    flat = [s for g in groups for s in g]
    rec: dict[str, Any] = {"step": step, "episodes": len(flat)}
    for d in REWARDS:
        values = [s.reward(d) for s in flat]
        mean = sum(values) / len(values)
        rec[f"reward_{d}"] = round(mean, 6)
        rec[f"reward_{d}_std"] = round((sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5, 6)
    rec["reward"] = rec[f"reward_{design}"]
    rec["success"] = rec["reward_sparse"]  # ruler-2 success of the samples
    values_of = (lambda g: [r for s in g for r in s.turn_rewards]) if design == "dense" else \
        (lambda g: [s.reward(design) for s in g])
    spread = [len(set(values_of(g))) > 1 for g in groups]
    rec["zero_spread_groups"] = round(1 - sum(spread) / len(spread), 6)
    rec["flagged"] = round(sum(bool(s.flags) for s in flat) / len(flat), 6)
    rec["flagged_and_passed"] = sum(bool(s.flags) and s.sparse == 1.0 for s in flat)
    rec["turns_mean"] = round(sum(len(s.turn_rewards) for s in flat) / len(flat), 4)
    return rec


def validate(learner: Learner, tasks: list[Task]) -> dict:
    """Greedy episodes on the fixed validation slice: ruler-2 success and the hacking flags."""
    policy = ModelPolicy(learner.sampler.backend, GenConfig(max_new_tokens=learner.cfg.max_new_tokens))
    learner.sampler.backend.forget_prefixes()
    done = list(rollout(tasks, policy, batch_size=learner.cfg.batch_size))
    ok = flagged = flagged_ok = 0
    counts: Counter = Counter()
    for f in done:
        record = f.episode.record()
        passed = judge_by(learner.cfg.ruler)(f.task, record)["success"]
        fl = flags(f.task, record)
        ok += passed
        flagged += bool(fl)
        flagged_ok += bool(fl) and passed
        counts.update(fl)
    n = len(done)
    return {"val_success": round(ok / n, 6), "val_flagged": round(flagged / n, 6), "val_flagged_and_passed": flagged_ok,
            "val_flags": {k: counts[k] for k in FLAGS if counts[k]}}


def sample_rows(groups: list[list[Scored]], step: int) -> list[dict]:
    """The step's episodes in full, for reading: turns, the three rewards, grades, reasons, flags."""
    return [{"step": step, "task_id": s.task["id"], "family": s.task["family"], "index": s.index,
             "turns": [t["text"] for t in s.episode.record()["turns"]], "final": s.episode.record()["final"],
             "status": s.episode.record()["status"], "sparse": s.sparse, "decomposed": s.decomposed,
             "turn_rewards": list(s.turn_rewards), "grades": list(s.grades), "reasons": list(s.reasons),
             "flags": list(s.flags)} for g in groups for s in g]


def lr_at(cfg: GrpoConfig, step: int) -> float:
    """Linear warmup to ``lr``, then constant (a short run; no decay to choose)."""
    return cfg.lr * min(1.0, (step + 1) / max(cfg.warmup, 1))


@dataclass
class GrpoResult:
    log: list[dict]  # one record per step
    val_log: list[dict]  # validation readings; step k: after k steps (0: C itself; a step may skip its update)
    first_samples: list[dict]
    last_samples: list[dict]
    seconds: float


def train_grpo(learner: Learner, pool: list[Task], val: list[Task], design: str,
               progress: Callable[[dict], None] = lambda rec: None,
               keep: Callable[[], None] = lambda: None) -> GrpoResult:
    """``keep``: called once, after step ``cfg.keep_at`` (when set), to keep the adapter of that point."""
    if design not in REWARDS:
        raise ValueError(f"unknown GRPO reward design {design!r}; valid: {', '.join(REWARDS)}")
    cfg = learner.cfg
    start = time.perf_counter()
    log: list[dict] = []
    val_log = [{"step": 0, **validate(learner, val)}]
    first: list[dict] = []
    for step in range(cfg.steps):
        t0 = time.perf_counter()
        groups = sample(learner, cfg.step_tasks(pool, step), step)
        t1 = time.perf_counter()
        rec = step_record(step, groups, design)
        rec.update(update(learner, groups, design, lr_at(cfg, step)))
        rec.update({"lr": lr_at(cfg, step), "sample_s": round(t1 - t0, 2), "update_s": round(time.perf_counter() - t1, 2)})
        first = first or sample_rows(groups, step)
        if (step + 1) % cfg.val_every == 0 or step == cfg.steps - 1:
            val_log.append({"step": step + 1, **validate(learner, val)})
        log.append(rec)
        progress(rec)
        if step + 1 == cfg.keep_at:
            keep()
    last = sample_rows(groups, cfg.steps - 1) if cfg.steps > 1 else []  # one step: its samples are the first
    return GrpoResult(log, val_log, first, last, round(time.perf_counter() - start, 2))
