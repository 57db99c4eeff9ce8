"""Constant parameters and buffers drawn anew from the judge's seed (python/vinci_runner/model_state.py).

Red-team round 42: LayerNorm's weight 1 and bias 0 were the only values ever judged, so a kernel that
dropped them was correct. Checked against values written by hand:
- LayerNorm's weight lands in [0.5, 1.5] and its bias in [-0.5, 0.5], neither constant; BatchNorm's
  running variance stays positive; random Linear weights, scalars and integer buffers are untouched;
- a candidate that holds the same state under other names (a bare weight and bias, no LayerNorm) gets
  the same draws, and an unrelated constant of another shape before them shifts nothing;
- weight and bias packed as the rows of one (2, dim) parameter, or as its columns, get the reference's
  draws row by row (round 43 judged such an honest LayerNorm incorrect); a (dim, 1, 1) constant gets
  the draws of a (dim,) one; a causal mask and an identity stay;
- another seed gives other draws; the same seed the same; a tied parameter is drawn once;
- perturb (round 44): every value x moves to x * (1 + h(x)/2), h in [-1, 1) a function of x and the
  key, so a transposed, concatenated or split copy of the reference's state moves with it, while
  column sums formed from the weights before the move are stale; masks, whole numbers and scalars
  stay; another key moves them elsewhere; under rounding the moved values are rounding-biased;
- the tensors are read from the modules' own dictionaries, so an override of named_parameters (round
  45: a cache refreshed whenever the judge listed the parameters) is never called; with only, just
  the values of one tensor move, in the reference's layout and in a packed copy alike;
- only what a checkpoint holds moves or is drawn (round 46: a weight copied into a buffer registered
  persistent=False moved in step with the weight, and stayed right for the judge only);
- assign_moved (round 47's Parameter objects kept from __init__): the moved values in new tensors
  where the old ones sat, tied ones in every place, version 0, the old tensors untouched, the values
  an in-place move's, and with only just those values;
- spike_plan and apply_spikes (round 62's cache kept while calls come close together): the values in
  only, multiplied by -256 in place when the plan is applied and not before, in a transposed copy too,
  the pointer kept and the version moved, as the reference's perturb with the factor moves them;
- the judge's side (judge_state): its fp64 reference follows the moved fp32 one exactly, and each
  evaluation starts again from the state as built;
- end to end: with the reference varied, a LayerNorm without its affine part is now far from it,
  while the honest one (the suite's own shape of solution) still matches.

    python3 tests/eval/model_state_test.py REPO_ROOT
"""
import copy
import json
import os
import sys

import torch
import torch.nn as nn

ROOT = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.join(ROOT, "python"))
from checks import check, finish  # noqa: E402
from vinci_runner import inputs, model_state  # noqa: E402
from vinci_runner.model_state import assign_moved, floating_state, perturb, value_set, vary_constants  # noqa: E402
from vinci_worker import judge_state  # noqa: E402

DIM = 64


class Reference(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(DIM)

    def forward(self, x):
        return self.ln(x)


class Renamed(nn.Module):
    """The reference's state under other names, after a constant of its own of another shape."""

    def __init__(self):
        super().__init__()
        self.register_buffer("ones_of_its_own", torch.ones(3))
        self.weight = nn.Parameter(torch.ones(DIM))
        self.bias = nn.Parameter(torch.zeros(DIM))

    def forward(self, x):
        return nn.functional.layer_norm(x, (DIM,), self.weight, self.bias, 1e-5)


class Dropped(nn.Module):
    def forward(self, x):
        return nn.functional.layer_norm(x, (DIM,), None, None, 1e-5)


def main() -> int:
    torch.manual_seed(0)
    ref = Reference()
    varied = vary_constants(ref, 42)
    w, b = ref.ln.weight.detach(), ref.ln.bias.detach()
    check(varied == ["ln.weight", "ln.bias"], f"LayerNorm's weight and bias are varied: {varied}")
    check(bool(((w >= 0.5) & (w <= 1.5)).all()) and w.unique().numel() > DIM // 2,
          f"the weight is drawn in [0.5, 1.5], not constant: {w[:4].tolist()}")
    check(bool(((b >= -0.5) & (b <= 0.5)).all()) and b.unique().numel() > DIM // 2,
          f"the bias is drawn in [-0.5, 0.5], not constant: {b[:4].tolist()}")

    other = Renamed()
    check(sorted(vary_constants(other, 42)) == ["bias", "ones_of_its_own", "weight"], "the renamed state is varied")
    check(torch.equal(other.weight.detach(), w) and torch.equal(other.bias.detach(), b),
          "the same state under other names, after a constant of another shape, gets the same draws")
    rows = nn.Parameter(torch.stack([torch.ones(DIM), torch.zeros(DIM)]))
    columns = nn.Parameter(torch.stack([torch.ones(DIM), torch.zeros(DIM)], dim=1))
    for packing in (rows, columns):
        packed = nn.Module()
        packed.affine = packing
        check(vary_constants(packed, 42) == ["affine"], "packed weight and bias are varied")
    check(torch.equal(rows[0].detach(), w) and torch.equal(rows[1].detach(), b),
          "weight and bias packed as rows get the reference's draws")
    check(torch.equal(columns[:, 0].detach(), w) and torch.equal(columns[:, 1].detach(), b),
          "weight and bias packed as columns get the reference's draws")
    unsqueezed = nn.Module()
    unsqueezed.weight = nn.Parameter(torch.ones(DIM, 1, 1))
    vary_constants(unsqueezed, 42)
    check(torch.equal(unsqueezed.weight.detach().reshape(-1), w), "a (dim, 1, 1) constant gets a (dim,) one's draws")
    masks = nn.Module()
    masks.register_buffer("causal", torch.tril(torch.ones(DIM, DIM)))
    masks.register_buffer("identity", torch.eye(DIM))
    check(vary_constants(masks, 42) == [] and torch.equal(masks.causal, torch.tril(torch.ones(DIM, DIM)))
          and torch.equal(masks.identity, torch.eye(DIM)), "a causal mask and an identity stay")
    again = Reference()
    vary_constants(again, 7)
    check(not torch.equal(again.ln.weight.detach(), w), "another seed draws other values")

    norm = nn.BatchNorm1d(DIM)
    vary_constants(norm, 42)
    check(bool((norm.running_var > 0).all()) and norm.running_var.unique().numel() > 1,
          "BatchNorm's running variance is varied and stays positive")
    check(norm.num_batches_tracked.item() == 0, "an integer buffer stays")
    linear = nn.Linear(DIM, DIM)
    before = linear.weight.detach().clone()
    check(vary_constants(linear, 42) == [] and torch.equal(linear.weight.detach(), before),
          "a random Linear is untouched")
    scalar = nn.Module()
    scalar.register_buffer("temperature", torch.tensor(1.0))
    check(vary_constants(scalar, 42) == [] and scalar.temperature.item() == 1.0, "a scalar stays")
    tied = nn.Module()
    tied.a = nn.Linear(2, DIM)
    tied.b = nn.Module()
    with torch.no_grad():
        tied.a.bias.zero_()
    tied.b.bias = tied.a.bias
    check(vary_constants(tied, 42) == ["a.bias"], "a tied parameter is drawn once")

    torch.manual_seed(1)
    linear = nn.Linear(DIM, 2 * DIM)
    copies = nn.Module()
    copies.transposed = nn.Parameter(linear.weight.detach().t().contiguous())
    copies.halves = nn.Parameter(torch.cat([linear.bias.detach()[DIM:], linear.bias.detach()[:DIM]]))
    copies.register_buffer("mask", (torch.rand(DIM, DIM) > 0.5).float())
    copies.register_buffer("positions", torch.arange(DIM, dtype=torch.float32))
    copies.scale = nn.Parameter(torch.tensor(0.5))
    before = linear.weight.detach().clone()
    sums = linear.weight.detach().sum(0)
    check(perturb(floating_state(linear), 99, rounding=False) == ["weight", "bias"], "a Linear's weight and bias move")
    check(perturb(floating_state(copies), 99, rounding=False) == ["transposed", "halves"],
          "copies move; a mask, whole numbers and a scalar stay")
    factor = (linear.weight.detach().double() / before.double())
    check(bool(((factor >= 0.5) & (factor < 1.5)).all()) and factor.std().item() > 0.1,
          f"each value moves by its own factor in [0.5, 1.5): {factor.min().item():.3f}-{factor.max().item():.3f}")
    check(torch.equal(copies.transposed.detach(), linear.weight.detach().t()),
          "a transposed copy of the weight is the moved weight, transposed")
    check(torch.equal(copies.halves.detach(), torch.cat([linear.bias.detach()[DIM:], linear.bias.detach()[:DIM]])),
          "a reordered copy of the bias is the moved bias, reordered")
    check((linear.weight.detach().sum(0) - sums).abs().max().item() > 0.1,
          "column sums formed before the move are stale after it")
    check(copies.scale.item() == 0.5 and torch.equal(copies.positions, torch.arange(DIM, dtype=torch.float32)),
          "a scalar and whole numbers stay")
    again_moved = nn.Linear(DIM, 2 * DIM)
    with torch.no_grad():
        again_moved.weight.copy_(before)
    perturb(floating_state(again_moved), 100, rounding=False)
    check(not torch.equal(again_moved.weight, linear.weight), "anagain_moved key moves the values elsewhere")
    with torch.no_grad():
        again_moved.weight.copy_(before)
    perturb(floating_state(again_moved), 99, rounding=True)
    check(torch.equal(again_moved.weight.detach(), inputs._rounding(linear.weight.detach())),
          "under rounding the moved values are rounding-biased")

    class Listening(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(DIM, DIM)
            self.listed = 0

        def named_parameters(self, *args, **kwargs):
            self.listed += 1
            return super().named_parameters(*args, **kwargs)

        def named_buffers(self, *args, **kwargs):
            self.listed += 1
            return super().named_buffers(*args, **kwargs)

    listening = Listening()
    state = floating_state(listening)
    check([n for n, _ in state] == ["linear.weight", "linear.bias"] and listening.listed == 0,
          f"the state is read without calling the model's methods: {[n for n, _ in state]}, {listening.listed}")
    weight0, bias0 = listening.linear.weight.detach().clone(), listening.linear.bias.detach().clone()
    packed = nn.Module()
    packed.both = nn.Parameter(torch.cat([bias0, weight0.reshape(-1)]))
    only_bias = value_set([listening.linear.bias])
    perturb(state, 7, rounding=False, only=only_bias)
    perturb(floating_state(packed), 7, rounding=False, only=only_bias)
    check(torch.equal(listening.linear.weight.detach(), weight0) and not torch.equal(listening.linear.bias.detach(), bias0),
          "with only the bias's values, the bias moves and the weight stays")
    check(torch.equal(packed.both.detach(), torch.cat([listening.linear.bias.detach(), weight0.reshape(-1)])),
          "a packed copy moves the same values and no others")

    # Round 46: a copy of the weight in a buffer registered persistent=False is no checkpoint's, so
    # neither vary_constants nor a move touches it (load_state_dict would not), while a persistent
    # buffer and the parameters are the model's checkpoint and do move.
    class StaleCopy(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(DIM))
            self.register_buffer("kept", self.weight.detach().clone())
            self.register_buffer("copy", self.weight.detach().clone(), persistent=False)
            self.register_buffer("ones", torch.ones(DIM), persistent=False)

    stale = StaleCopy()
    check([n for n, _ in floating_state(stale)] == ["weight", "kept"],
          f"only what a checkpoint holds is state: {[n for n, _ in floating_state(stale)]}")
    vary_constants(stale, 3)
    check(torch.equal(stale.ones, torch.ones(DIM)), "a transient constant is not drawn anew")
    weight0 = stale.weight.detach().clone()
    perturb(floating_state(stale), 11, rounding=False, only=value_set([stale.weight]))
    check(not torch.equal(stale.weight.detach(), weight0) and torch.equal(stale.kept, stale.weight.detach()) and
          torch.equal(stale.copy, weight0),
          "the weight and its persistent copy move together; the transient copy stays, stale")

    built = nn.Linear(DIM, DIM)
    task = judge_state.TaskState("t", 1.0, None, built, copy.deepcopy(built).double(), [], [], "", False, False, 0)
    judge_state.keep_pristine(task)
    as_built = built.weight.detach().clone()
    judge_state.perturb_state(task, 5, rounding=True)
    check(not torch.equal(built.weight.detach(), as_built) and
          torch.equal(task.ref64.weight.detach(), built.weight.detach().double()),
          "the fp64 reference holds the moved fp32 values exactly")
    judge_state.reset_state(task)
    check(torch.equal(built.weight.detach(), as_built) and torch.equal(task.ref64.weight.detach(), as_built.double()),
          "an evaluation starts again from the state as built")

    # assign_moved: the moved values in new tensors put where the old ones sat (a tied weight in both
    # places), version 0; the old objects keep their values; the values equal an in-place move's.
    tied = nn.Sequential(nn.Linear(DIM, DIM), nn.Linear(DIM, DIM))
    tied[1].weight = tied[0].weight
    tied.register_buffer("table", torch.randn(DIM))
    inplace = copy.deepcopy(tied)
    old_state = floating_state(tied)
    old_values = [t.detach().clone() for _, t in old_state]
    new_state = assign_moved(tied, old_state, 11, rounding=True)
    perturb(floating_state(inplace), 11, rounding=True)
    check(tied[0].weight is new_state[0][1] and tied[1].weight is tied[0].weight
          and type(tied[0].weight) is nn.Parameter and tied.table is new_state[-1][1],
          "the new tensors sit where the old ones did, a tied weight in both places, Parameters as Parameters")
    check(all(torch.equal(t.detach(), v) for (_, t), v in zip(old_state, old_values)),
          "the old tensors keep their values")
    check(all(torch.equal(a.detach(), b.detach()) for (_, a), (_, b) in zip(new_state, floating_state(inplace))),
          "the new values are an in-place move's")
    check(all(t._version == 0 for _, t in new_state), "version 0, as a tensor a checkpoint was loaded into")
    only = value_set([tied[0].bias])
    kept = tied[0].weight.detach().clone()
    bias = tied[0].bias.detach().clone()
    assign_moved(tied, floating_state(tied), 12, rounding=False, only=only)
    check(torch.equal(tied[0].weight.detach(), kept) and not torch.equal(tied[0].bias.detach(), bias),
          "with only, just those values move")

    # Red-team round 52: a table of the candidate's own whose entries meet the state's values by chance
    # stays (HELD_SHARE), a copy of the state moves, and an fp64 master copy keeps the fp32 reference's
    # values move after move.
    weight = torch.nn.Linear(DIM, DIM).weight.detach()
    held = value_set([weight])
    table = torch.sigmoid(torch.linspace(-8, 8, 4096))
    chance = int(torch.isin(table.view(torch.int32), held).sum())
    table[:8] = weight.reshape(-1)[:8]  # a few entries equal to the weight's, as chance gives a large weight's
    own, duplicate, master = table.clone(), weight.clone(), weight.double()
    reference = weight.clone()
    for k in range(3):
        perturb([("reference", reference)], 40 + k, rounding=True)
        perturb([("table", own), ("copy", duplicate), ("master", master)], 40 + k, rounding=True,
                only=value_set([duplicate]), held=value_set([duplicate]))
    check(torch.equal(own, table), f"the kernel's own table stays ({chance} + 8 of its entries met the weight's values)")
    check(torch.equal(duplicate, reference), "a copy of the state moves as the reference's does")
    check(torch.equal(master, reference.double()), "an fp64 copy holds the fp32 reference's moved values exactly")

    # The reference's constants, counted, bound the candidate's (round 54): its own zero bias buffer, a
    # key the reference has no tensor for, keeps its zeros; the reference's LayerNorm constants are drawn
    # as the reference's are; the counts cross the wire intact, infinities included.
    class RefNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(DIM)

    class OwnBias(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(DIM)
            self.register_buffer("own_bias", torch.zeros(DIM + 1))

    counted = {}
    reference_norm = RefNorm()
    vary_constants(reference_norm, 42, counted=counted)
    check(counted == {(DIM, "torch.float32", 1.0): ["ln.weight"], (DIM, "torch.float32", 0.0): ["ln.bias"]},
          f"the reference's keys, with their pieces' names: {counted}")
    infinite = {**counted, (4, "torch.float32", float("-inf")): ["mask[0:0]", "mask[0:1]"]}
    wire = model_state.constant_counts_to_wire(infinite)
    check(model_state.constant_counts_from_wire(json.loads(json.dumps(wire))) == infinite,
          f"the keys and names cross the wire: {wire}")
    candidate_norm = OwnBias()
    varied_names = vary_constants(candidate_norm, 42, allowed=counted)
    check(varied_names == ["ln.weight", "ln.bias"] and torch.equal(candidate_norm.own_bias, torch.zeros(DIM + 1)),
          f"the candidate's own zero buffer keeps its zeros: {varied_names}")
    check(torch.equal(candidate_norm.ln.weight.detach(), reference_norm.ln.weight.detach()),
          "the reference's constants are drawn alike")

    # Modules of equal constants in another order (round 54: an exact TransformerBlock that registered its
    # MLP first got ln2's draws in ln1): a tensor of the reference's name takes that name's draws, and the
    # others take those left in order, so renamed pieces still line up by order.
    class Block(nn.Module):
        def __init__(self, first_ln1: bool = True, names: tuple = ("ln1", "ln2")):
            super().__init__()
            for name in (names if first_ln1 else names[::-1]):
                setattr(self, name, nn.LayerNorm(DIM))

    block_drawn = {}
    block = Block()
    vary_constants(block, 42, counted=block_drawn)
    check(block_drawn[(DIM, "torch.float32", 1.0)] == ["ln1.weight", "ln2.weight"], f"drawn in order: {block_drawn}")
    swapped = Block(first_ln1=False)
    vary_constants(swapped, 42, allowed=block_drawn)
    check(all(torch.equal(getattr(swapped, n).weight.detach(), getattr(block, n).weight.detach()) and
              torch.equal(getattr(swapped, n).bias.detach(), getattr(block, n).bias.detach()) for n in ("ln1", "ln2")),
          "modules registered in the other order get their own names' draws")
    renamed_block = Block(names=("norm_a", "norm_b"))
    vary_constants(renamed_block, 42, allowed=block_drawn)
    check(torch.equal(renamed_block.norm_a.weight.detach(), block.ln1.weight.detach()) and
          torch.equal(renamed_block.norm_b.bias.detach(), block.ln2.bias.detach()),
          "renamed modules take the draws in the reference's order")
    half_named = Block(first_ln1=False, names=("ln1", "other"))
    vary_constants(half_named, 42, allowed=block_drawn)
    check(torch.equal(half_named.ln1.weight.detach(), block.ln1.weight.detach()) and
          torch.equal(half_named.other.weight.detach(), block.ln2.weight.detach()),
          "a named piece keeps its name's draw, an unnamed one takes the draw left")
    packed_block = nn.Module()
    packed_block.affine = nn.Parameter(torch.stack([torch.ones(DIM), torch.zeros(DIM)]))
    packed_drawn = {}
    vary_constants(packed_block, 42, counted=packed_drawn)
    check(packed_drawn == {(DIM, "torch.float32", 1.0): ["affine[0:0]"], (DIM, "torch.float32", 0.0): ["affine[0:1]"]},
          f"a packed tensor's rows are named by row: {packed_drawn}")

    # A whole move's positional load (round 52): the reference's values go into the tensor of its name and
    # shape, as a user's load_state_dict puts them, whatever layout the kernel kept there; a renamed
    # copy, or one of another shape, is the value-keyed move's alone.
    reference = torch.arange(DIM * DIM, dtype=torch.float32).reshape(DIM, DIM) / 7
    kept_transposed, renamed, other_shape = reference.t().contiguous(), reference.t().contiguous(), torch.zeros(2, DIM)
    manifest = [{"name": "linear.weight", "shape": [DIM, DIM], "dtype": "float32"},
                {"name": "linear.bias", "shape": [2, DIM], "dtype": "float32"}]
    data = reference.numpy().tobytes() + (torch.ones(2, DIM) * 3).numpy().tobytes()
    written = model_state.load_positional([("linear.weight", kept_transposed), ("wt", renamed), ("linear.bias", other_shape[:1])],
                                          manifest, data)
    check(written == ["linear.weight"] and torch.equal(kept_transposed, reference), f"the named tensor is loaded: {written}")
    check(torch.equal(renamed, reference.t()) and torch.equal(other_shape, torch.zeros(2, DIM)),
          "a renamed copy and a tensor of another shape stay")

    # spike_plan and apply_spikes (round 62): the values in only, wherever a tensor mostly holding the
    # state's values has them, multiplied by -256 in place when the plan is applied, not before; the same
    # tensors and data pointers, their versions moved; perturb with the same factor moves a reference alike.
    weight = nn.Parameter(torch.tensor([[0.5, -0.25, 3.0], [0.5, 2.0, 0.0]]))
    copy_t = weight.detach().t().contiguous()  # a transposed copy of the reference's weight
    own = torch.tensor([0.5, 7.0, 9.0, 11.0])  # a table of its own, a quarter of it the state's values
    only = value_set([torch.tensor([0.5, 2.0])])
    held = value_set([weight])
    check(model_state.SPIKE_FACTOR == -256.0, "the spike's factor is -256")
    pointer, version = weight.data_ptr(), weight._version
    plan = model_state.spike_plan([("w", weight), ("wt", copy_t), ("own", own)], only, held)
    check(torch.equal(weight.detach(), torch.tensor([[0.5, -0.25, 3.0], [0.5, 2.0, 0.0]])), "a plan changes nothing")
    model_state.apply_spikes(plan)
    check(torch.equal(weight.detach(), torch.tensor([[-128.0, -0.25, 3.0], [-128.0, -512.0, 0.0]])),
          f"0.5 and 2.0 spiked in the weight: {weight.detach().tolist()}")
    check(torch.equal(copy_t, weight.detach().t()), "its transposed copy alike")
    check(torch.equal(own, torch.tensor([-128.0, 7.0, 9.0, 11.0])),
          f"a table a quarter of which is the state's values moves too (HELD_SHARE, 1/32): {own.tolist()}")
    check(weight.data_ptr() == pointer and weight._version > version, "in place: the pointer stays, the version moves")
    reference_weight = torch.tensor([[0.5, -0.25, 3.0], [0.5, 2.0, 0.0]])
    perturb([("w", reference_weight)], 0, False, only, factor=model_state.SPIKE_FACTOR)
    check(torch.equal(reference_weight, weight.detach()), "the reference's perturb with the factor moves it alike")
    sparse = torch.tensor([1.0, 2.0, 3.0, 5.0] * 16)
    model_state.apply_spikes(model_state.spike_plan([("sparse", sparse)], only, value_set([torch.tensor([0.0])])))
    check(torch.equal(sparse, torch.tensor([1.0, 2.0, 3.0, 5.0] * 16)),
          "a tensor holding under 1/32 of the state's values stays (HELD_SHARE)")

    x = torch.rand(8, DIM)
    with torch.no_grad():
        expected = ref(x)
        honest = other(x)
        dropped = Dropped()(x)
    check(torch.allclose(honest, expected, atol=1e-5), "the honest kernel with the state matches the varied reference")
    check((dropped - expected).abs().max().item() > 0.1,
          f"the kernel without the affine part is far from it: {(dropped - expected).abs().max().item():.3f}")
    # relay (round 65: a Linear that read its weight as dense): every floating parameter and buffer of
    # two or more elements re-laid in the layout, the values and the Parameter objects kept; a
    # one-element tensor and an integer buffer as they were. inputs_for: a leaf that requires grad in
    # inputs_grad alone, its values unchanged, integers and scalars left alone.
    for layout in inputs.STRIDED_LAYOUTS:
        net = nn.Sequential(nn.Linear(6, 4), nn.LayerNorm(4))
        net.register_buffer("steps", torch.arange(3))
        net.register_buffer("scale", torch.tensor([2.0]))
        before = {k: v.clone() for k, v in net.state_dict().items()}
        weight = net[0].weight
        model_state.relay(net, layout)
        after = net.state_dict()
        check(all(torch.equal(before[k], after[k]) for k in before), f"relay {layout}: the values kept")
        w = net[0].weight
        relaid = not w.is_contiguous() if layout == "transposed" else w.storage_offset() > 0 and (
            layout == "offset" or not w.is_contiguous())
        check(net[0].weight is weight and relaid, f"relay {layout}: the Parameter kept, laid out anew: "
              f"{net[0].weight.stride()}, offset {net[0].weight.storage_offset()}")
        check(net.steps.is_contiguous() and net.steps.storage_offset() == 0 and net.scale.storage_offset() == 0,
              f"relay {layout}: an integer buffer and a one-element tensor stay")
        bias = net[0].bias
        check(bias.storage_offset() > 0 and bias.is_contiguous(),
              f"relay {layout}: a vector moved off its base, contiguous: "
              f"{bias.stride()}, offset {bias.storage_offset()}")
    x, n = torch.rand(3, 2), torch.arange(4)
    kept = model_state.inputs_for("inputs_grad", [x, n, 5])
    check(kept[0].requires_grad and kept[0].is_leaf and torch.equal(kept[0].detach(), x) and not x.requires_grad,
          "inputs_grad: a floating input a leaf that requires grad, the judge's tensor untouched")
    check(kept[1] is n and kept[2] == 5, "inputs_grad: integers and scalars as they are")
    check(all(a is b for a, b in zip(model_state.inputs_for("grad", [x, n]), [x, n])), "another mode: the inputs as they are")
    served = model_state.inputs_for("inference", [x, n, 5])
    check(served[0].is_inference() and served[1].is_inference() and torch.equal(served[0], x) and served[2] == 5,
          "inference: every tensor an inference tensor of the same values")
    # called_in: each mode's switches inside the call, and every one of them put back after it.
    net = nn.Linear(3, 2).eval()
    seen = {}
    for mode in model_state.CALL_MODES:
        with model_state.called_in(net, mode):
            seen[mode] = (net.training, torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
                          torch.are_deterministic_algorithms_enabled())
    check(seen == {"train": (True, False, False, False), "grad": (False, True, False, False),
                   "train_grad": (True, True, False, False), "inputs_grad": (False, True, False, False),
                   "inference": (False, False, True, False), "deterministic": (False, False, False, True)},
          f"called_in: each mode's switches: {seen}")
    check(not net.training and not torch.are_deterministic_algorithms_enabled() and not torch.is_inference_mode_enabled(),
          "called_in: eval mode, nondeterministic algorithms and no inference mode after every call")
    return finish("ok")


if __name__ == "__main__":
    sys.exit(main())
