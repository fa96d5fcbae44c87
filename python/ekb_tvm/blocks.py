"""The loop IR of a workload made only of pure definitions, as a TVMScript PrimFunc with blocks,
which MetaSchedule can schedule (docs/TVM.md, "Tuning").

The imperative translation (translate.py) has no blocks, and MetaSchedule's rules only schedule
blocks. For a pure definition the default lowering writes each stage as one loop nest over the
output's index space:

    for i, j:                      spatial loops, constant bounds
      var acc = init               one accumulator per reduction in the definition
      for k: acc = acc OP e(k)     its loops, constant bounds
      C[...] = f(acc, ...)         the one store

which becomes a reduction block per accumulator (the accumulator a buffer over the spatial
loops, initialised in T.init) and a spatial block for the store, as TE's create_prim_func would
build them. The expressions are translate.py's, so everything the loop IR settled (wrapping
arithmetic, guarded boundary reads, widened halves, f64 accumulation) means the same. A stage of
another shape (a loop bound that depends on another loop, a nested reduction, a let, a guard)
raises NotTunable: the workload then keeps the untuned translation.
"""

import math

from .translate import BUFFER_DTYPES, DTYPES, Translator


class NotTunable(Exception):
    """Why the loop IR has no block form here (the result's tuning note)."""


def statements(s):
    """s as a list of statements (a block's, or s alone)."""
    return list(s["stmts"]) if s["k"] == "block" else [s]


def only(s):
    """The single statement of s (a block of one), or None."""
    stmts = statements(s)
    return stmts[0] if len(stmts) == 1 else None


def constant(e):
    return e["v"] if e["k"] == "int" else None


def names_in(e, out):
    """Every variable name read in expression e."""
    if e["k"] == "var":
        out.add(e["name"])
    for a in e.get("args", []) + e.get("indices", []):
        names_in(a, out)
    return out


class BlockTranslator(Translator):
    # *args: what a sibling translator mixed in after this one takes (gpu_tune.py: the language).
    def __init__(self, func, symbol, *args):
        super().__init__(func, symbol, *args)
        self.var_text = {}  # loop variable -> its value in terms of block variables
        self.accumulators = {}  # accumulator -> (buffer name, its index text)
        self.allocations = []  # T.alloc_buffer lines of the temps and accumulators
        # Temps of more than one dimension are declared with their shapes, each flat index split
        # back into one index per dimension (temp_index). Over a flat temp, TVM 0.27's compute_at
        # inverts the producer's index `y * W + x` at the two ends of the consumer's flat range
        # only (InverseAffineIterMap in compute_at.cc): a box filter's tile reading rows
        # [y0, y1] at columns x - R .. x + R got x in [R - 1, W - R] instead of [0, W - 1], and the
        # columns it skipped were never computed (img.guided_filter, tuned: 3360 pixels wrong).
        self.temp_shapes = {b["name"]: b["shape"] for b in func["buffers"]
                            if b["role"] == "temp" and len(b["shape"]) > 1}

    def expr(self, e):
        if e["k"] == "load" and e["buffer"] in self.temp_shapes:
            text = self.element_at(e["buffer"], e["indices"][0])
            return "(%s != T.uint8(0))" % text if e["type"] == "bool" else text
        if e["k"] == "var" and e["name"] in self.accumulators:
            buf, index = self.accumulators[e["name"]]
            return "%s[%s]" % (buf, index)
        if e["k"] == "var" and e["name"] in self.var_text:
            return self.var_text[e["name"]]
        return super().expr(e)

    def param_shape(self, b):
        """The shape tensor parameter b is declared with: flat, as the loop IR indexes it."""
        n = 1
        for d in b["shape"]:
            n *= d
        return "(%d,)" % n

    def element(self, buffer, index):
        """The element of `buffer` at the flat index text `index`."""
        return "%s[%s]" % (self.buf_name(buffer), index)

    def element_at(self, buffer, index):
        """The element of `buffer` at the flat index expression `index` (JSON)."""
        shape = self.temp_shapes.get(buffer)
        if shape is None:
            return self.element(buffer, self.expr(index))
        return "%s[%s]" % (self.buf_name(buffer), ", ".join(self.temp_index(index, shape)))

    def temp_index(self, e, shape):
        """One index text per dimension of a temp of `shape` whose flat index is `e`. The loop IR
        flattens t[i, j, k] as i * S0 + (j * S1 + k) (S the strides): those terms are taken back
        as they are, a folded constant first index (i * S0 + c) too; any other form is split by
        floordiv/floormod of the strides, which is exact for every index read."""
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * shape[d + 1]
        parts = self.split_flat(e, strides, shape)
        if parts is not None:
            return parts
        flat, out = self.expr(e), []
        for d, (n, stride) in enumerate(zip(shape, strides)):
            part = "T.floordiv(%s, T.int64(%d))" % (flat, stride) if stride > 1 else flat
            out.append(part if d == 0 else "T.floormod(%s, T.int64(%d))" % (part, n))
        return out

    def split_flat(self, e, strides, shape):
        if len(strides) == 1:
            return [self.expr(e)]
        if e["k"] != "binary" or e["op"] != "add" or not e.get("no_wrap", True):
            return None
        x, y = e["args"]
        for a, rest in ((x, y), (y, x)):  # a * S0 + rest
            if (a["k"] == "binary" and a["op"] == "mul" and a.get("no_wrap", True)
                    and constant(a["args"][1]) == strides[0]):
                tail = self.split_flat(rest, strides[1:], shape[1:])
                if tail is not None:
                    return [self.expr(a["args"][0])] + tail
        c = constant(y)  # rest + c, c = i * S0 with a constant i inside the first dimension
        if c is not None and c % strides[0] == 0 and 0 <= c // strides[0] < shape[0]:
            tail = self.split_flat(x, strides[1:], shape[1:])
            if tail is not None:
                return ["T.int64(%d)" % (c // strides[0])] + tail
        return None

    def loops(self, s, stage):
        """The perfect nest of constant-bound loops at s: ([(var, min, extent)], its body)."""
        nest = []
        while s is not None and s["k"] == "for":
            lo, ext = constant(s["min"]), constant(s["extent"])
            if lo is None or ext is None:
                raise NotTunable("stage %d: loop %s has bounds that depend on another loop" % (stage, s["var"]))
            nest.append((s["var"], lo, ext))
            body = only(s["body"])
            if body is None or body["k"] != "for":
                return nest, s["body"]
            s = body
        return nest, s

    def block(self, depth, name, axes, body_lines, init_line=None):
        """Loops from 0 over `axes` [(var, min, extent, "S" | "R")] around one block whose
        variables stand for them (min added back where it is not 0)."""
        for var, _, ext, _ in axes:
            self.emit(depth, "for l_%s in T.serial(T.int64(%d)):" % (self.var_name(var), ext))
            depth += 1
        self.emit(depth, 'with T.sblock("%s"):' % name)
        depth += 1
        for var, lo, ext, kind in axes:
            axis = "T.axis.spatial" if kind == "S" else "T.axis.reduce"
            self.emit(depth, "b%s = %s(T.int64(%d), l_%s)" % (self.var_name(var), axis, ext, self.var_name(var)))
        if init_line is not None:
            self.emit(depth, "with T.init():")
            self.emit(depth + 1, init_line)
        for line in body_lines:
            self.emit(depth, line)

    def stage(self, s, n):
        spatial, body = self.loops(s, n)
        for var, lo, _ in spatial:
            self.var_text[var] = "b%s" % self.var_name(var) if lo == 0 else "(b%s + T.int64(%d))" % (self.var_name(var), lo)
        index = ", ".join("b%s" % self.var_name(v) for v, _, _ in spatial) or "T.int64(0)"
        shape = ", ".join("T.int64(%d)" % e for _, _, e in spatial) or "T.int64(1)"
        # declare acc = init { ...reduction loops...; the store }
        reductions = []
        while body["k"] == "declare":
            acc, init = body["var"], body["value"]
            if names_in(init, set()) & set(self.accumulators):
                raise NotTunable("stage %d: an accumulator's initial value reads another" % n)
            buf = "b_acc%d_%d" % (n, len(reductions))
            self.allocations.append('%s = T.sblock_alloc_buffer((%s,), "%s")' % (buf, shape, DTYPES[body["type"]]))
            self.accumulators[acc] = (buf, index)
            reductions.append((acc, init))
            body = body["body"]
        stmts = statements(body)
        if not stmts or stmts[-1]["k"] != "store":
            raise NotTunable("stage %d: its loop nest does not end in one store" % n)
        updates = stmts[:-1]
        if len(updates) != len(reductions):
            raise NotTunable("stage %d: not one reduction loop per accumulator" % n)
        for r, ((acc, init), loop) in enumerate(zip(reductions, updates)):
            nest, update = self.loops(loop, n)
            update = only(update) if update is not None else None
            if not nest or update is None or update["k"] != "assign" or update["var"] != acc:
                raise NotTunable("stage %d: accumulator %s is not updated by one loop nest" % (n, acc))
            for var, lo, _ in nest:
                self.var_text[var] = "b%s" % self.var_name(var) if lo == 0 else "(b%s + T.int64(%d))" % (self.var_name(var), lo)
            others = names_in(update["value"], set()) & (set(self.accumulators) - {acc})
            if others:
                raise NotTunable("stage %d: a reduction reads another accumulator" % n)
            buf, _ = self.accumulators[acc]
            axes = [(v, lo, e, "S") for v, lo, e in spatial] + [(v, lo, e, "R") for v, lo, e in nest]
            self.block(1, "s%d_r%d" % (n, r), axes, ["%s[%s] = %s" % (buf, index, self.expr(update["value"]))],
                       init_line="%s[%s] = %s" % (buf, index, self.expr(init)))
        store = stmts[-1]
        if len(store["indices"]) != 1:
            raise NotTunable("a store to %s is not flat" % store["buffer"])
        value = self.expr(store["value"])
        if self.buffer_types.get(store["buffer"]) == "bool":
            value = 'T.Cast("uint8", %s)' % value
        line = "%s = %s" % (self.element_at(store["buffer"], store["indices"][0]), value)
        self.block(1, "s%d" % n, [(v, lo, e, "S") for v, lo, e in spatial], [line])

    def script(self):
        f = self.func
        sig = []
        for b in f["buffers"]:
            if b["role"] in ("input", "output"):
                sig.append('%s: T.Buffer(%s, "%s")' % (self.buf_name(b["name"]), self.param_shape(b),
                                                      BUFFER_DTYPES[b["type"]]))
        self.lines = []
        # s_tir: the schedulable dialect (blocks), which TVM 0.27's plain tirx verifier refuses.
        head = ["# from tvm.script import tirx as T", "@T.prim_func(s_tir=True)",
                "def %s(%s):" % (self.symbol, ", ".join(sig)),
                '    T.func_attr({"global_symbol": "%s", "tir.noalias": True})' % self.symbol]
        # Temps (Allocate around the rest) become buffers of the function; what is left is stages.
        body = f["body"]
        stages = []
        pending = statements(body)
        while pending:
            s = pending.pop(0)
            if s["k"] == "allocate":
                self.buffer_types[s["buffer"]] = s["type"]
                ext = constant(s["extent"])
                if ext is None:
                    raise NotTunable("temp %s has no constant size" % s["buffer"])
                shape = self.temp_shapes.get(s["buffer"], [ext])
                if ext != math.prod(shape):  # not the declared tensor: flat
                    self.temp_shapes.pop(s["buffer"], None)
                    shape = [ext]
                self.allocations.append('%s = T.sblock_alloc_buffer((%s,), "%s")' % (
                    self.buf_name(s["buffer"]), ", ".join("T.int64(%d)" % d for d in shape), BUFFER_DTYPES[s["type"]]))
                pending = statements(s["body"]) + pending
            elif s["k"] == "block":
                pending = statements(s) + pending
            else:
                stages.append(s)
        if not stages:
            raise NotTunable("nothing to compute")
        for n, s in enumerate(stages):
            if s["k"] not in ("for", "declare"):  # a declare: a reduction to one value
                raise NotTunable("stage %d is a %s, not a loop nest" % (n, s["k"]))
            self.stage(s, n)
        # Every buffer of the function is allocated before its first block.
        return "\n".join(head + ["    " + a for a in self.allocations] + self.lines) + "\n"


def to_block_tvmscript(func, symbol):
    """(TVMScript with blocks, the shim helpers it calls); raises NotTunable."""
    tr = BlockTranslator(func, symbol)
    text = tr.script()
    return text, sorted(tr.externs)
