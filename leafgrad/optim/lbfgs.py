"""``leafgrad.optim.LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search.

The arithmetic is PyTorch 2.13's, op for op and in the same order, so a run gives PyTorch's
iterates, loss values, evaluation counts and state (``d``, ``t``, ``old_dirs``, ``old_stps``,
``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``func_evals``, ``n_iter``). Like PyTorch it
decides when to stop by reading values on the host (``float(loss)``, comparisons of 0-d
tensors), so it runs eagerly; inside ``leafgrad.compile`` those reads raise the usual
data-dependent error.
"""

from __future__ import annotations

from .._tensor import Tensor, contiguous_format
from ..autograd import grad_mode
from .optimizer import Optimizer, _to_scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through two points with values and slopes, clipped to
    ``bounds`` (the interval between the points by default); the midpoint when the cubic has
    no real minimiser."""
    if bounds is None:
        bounds = (x1, x2) if x1 <= x2 else (x2, x1)
    lo, hi = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1**2 - g1 * g2
    if not disc >= 0:
        return (lo + hi) / 2.0
    d2 = disc.sqrt()
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


class _Bracket:
    """One end of the line search's bracket: step, loss, flat gradient, directional slope."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Find a step along ``d`` meeting the strong Wolfe conditions: bracket one, then zoom.

    Returns ``(loss, flat_grad, t, evaluations)`` as PyTorch's ``_strong_wolfe``."""
    d_norm = d.abs().max()
    g = g.clone(memory_format=contiguous_format)
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)

    # Bracketing phase.
    prev = _Bracket(0, f, g, gtd)
    bracket: list[_Bracket] | None = None
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= prev.f):
            bracket = [
                prev,
                _Bracket(t, f_new, g_new.clone(memory_format=contiguous_format), gtd_new),
            ]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [_Bracket(t, f_new, g_new, None)]
            done = True
            break
        if gtd_new >= 0:
            bracket = [
                prev,
                _Bracket(t, f_new, g_new.clone(memory_format=contiguous_format), gtd_new),
            ]
            break
        # Extrapolate: the cubic's minimiser within [t + 0.01 (t - t_prev), 10 t].
        t_old = t
        t = _cubic_interpolate(
            prev.t, prev.f, prev.gtd, t, f_new, gtd_new, bounds=(t + 0.01 * (t - prev.t), t * 10)
        )
        prev = _Bracket(t_old, f_new, g_new.clone(memory_format=contiguous_format), gtd_new)
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [_Bracket(0, f, g, None), _Bracket(t, f_new, g_new, None)]
    assert bracket is not None

    # Zoom phase: shrink the bracket around a point meeting the conditions.
    insufficient = False
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change:
            break
        a, b = bracket
        t = _cubic_interpolate(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        # Keep the trial point at least a tenth of the bracket away from its ends when the
        # last step made too little progress or the interpolation fell on an end.
        top = max(a.t, b.t)
        bottom = min(a.t, b.t)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False

        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        point = _Bracket(t, f_new, g_new.clone(memory_format=contiguous_format), gtd_new)
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low].f:
            # Armijo fails or no lower than the low end: the new point is the high end.
            bracket[high] = point
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = point

    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS``: one parameter group, ``step(closure)`` required.

    >>> opt = leafgrad.optim.LBFGS([p], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = f(p)
    ...     loss.backward()
    ...     return loss
    >>> opt.step(closure)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        if any(p.is_complex() for p in self._params):
            raise NotImplementedError(
                "leafgrad.optim.LBFGS does not support complex parameters yet (needs view_as_real)"
            )
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        """All gradients as one flat vector (zeros for a parameter without one)."""
        from ..ops.shape import cat

        parts = []
        for p in self._params:
            if p.grad is None:
                parts.append(p.new_zeros(p.numel()))
            else:
                parts.append(p.grad.view(-1))
        return cat(parts, 0)

    def _add_grad(self, step_size, update: Tensor) -> None:
        """Move every parameter by ``step_size`` times its slice of the flat ``update``."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset : offset + n].view_as(p), alpha=step_size)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self) -> list[Tensor]:
        return [p.clone(memory_format=contiguous_format) for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, data in zip(self._params, params_data, strict=True):
            p.copy_(data)

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` re-evaluates the loss and its
        gradients. Returns the loss of the first evaluation."""
        with grad_mode.no_grad():
            return self._step(closure)

    def _step(self, closure):
        if len(self.param_groups) != 1:
            raise AssertionError(
                f"Expected exactly one param_group, but got {len(self.param_groups)}"
            )
        closure = grad_mode.enable_grad()(closure)
        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        # The optimizer's state is global; PyTorch keeps it under the first parameter, which
        # is where load_state_dict casts it.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d = state.get("d")
        t = state.get("t")
        old_dirs = state.get("old_dirs")
        old_stps = state.get("old_stps")
        ro = state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad = state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # Direction: steepest descent first, then the two-loop recursion over the history.
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q.mul(H_diag)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone(memory_format=contiguous_format)
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # Step length: scaled by the gradient's size on the very first iteration.
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # Re-evaluate only when another iteration follows.
                    with grad_mode.enable_grad():
                        loss = closure()
                    loss = float(loss)
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = d
        state["t"] = t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss
