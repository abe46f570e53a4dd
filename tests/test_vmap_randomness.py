"""Random ops inside ``torch.func.vmap`` (Note [Randomness in vmap] in func.py): under
``randomness="error"`` every draw raises, under "same" one draw serves the whole batch, under
"different" each sample draws its own values, from PyTorch's generator stream in the order
PyTorch draws them (the batch's draw made at once, the batch dims first). Each case seeds both
libraries, runs the same function under vmap in torch and in leafgrad and compares the values
bit for bit, or the errors."""

import pytest
from conftest import both

B = 4
MODES = ("error", "same", "different")


def _x(m, shape=(B, 3), lo=0.2, hi=0.8):
    n = 1
    for s in shape:
        n *= s
    return (m.arange(n, dtype=m.float32).reshape(shape) % 7) * ((hi - lo) / 6) + lo


# name -> (body(m, x), input shape, in_dims)
CASES = {
    "randn": (lambda m, x: m.randn(3) + x, (B, 3), 0),
    "rand_2d": (lambda m, x: m.rand(2, 3) * x, (B, 3), 0),
    "randn_float64": (lambda m, x: m.randn(3, dtype=m.float64), (B, 3), 0),
    "randint": (lambda m, x: m.randint(0, 10, (3,)), (B, 3), 0),
    "randint_low": (lambda m, x: m.randint(5, (2, 2)), (B, 3), 0),
    "randperm": (lambda m, x: m.randperm(5), (B, 3), 0),
    "normal_floats": (lambda m, x: m.normal(0.0, 2.0, (3,)), (B, 3), 0),
    "rand_like": (lambda m, x: m.rand_like(x), (B, 3), 0),
    "randn_like": (lambda m, x: m.randn_like(x) + x, (B, 3), 0),
    "randint_like": (lambda m, x: m.randint_like(x, 10), (B, 3), 0),
    "rand_like_unbatched": (lambda m, x: m.rand_like(_x(m, (3,))) + x, (B, 3), 0),
    "rand_like_in_dims1": (lambda m, x: m.rand_like(x), (3, B), 1),
    "rand_like_in_dims1_3d": (lambda m, x: m.rand_like(x), (2, B, 3), 1),
    "normal_": (lambda m, x: x.clone().normal_(), (B, 3), 0),
    "uniform_": (lambda m, x: x.clone().uniform_(-1, 1), (B, 3), 0),
    "exponential_": (lambda m, x: x.clone().exponential_(), (B, 3), 0),
    "random_": (lambda m, x: x.clone().random_(10), (B, 3), 0),
    "bernoulli_float": (lambda m, x: x.clone().bernoulli_(0.3), (B, 3), 0),
    "bernoulli_tensor": (lambda m, x: x.clone().bernoulli_(x), (B, 3), 0),
    "normal_in_dims1": (lambda m, x: x.normal_(), (3, B), 1),
    "normal_unbatched": (lambda m, x: m.zeros(3).normal_() + x, (B, 3), 0),
    "empty_uniform_": (lambda m, x: m.empty(3).uniform_(), (B, 3), 0),
    "bernoulli": (lambda m, x: m.bernoulli(x), (B, 3), 0),
    "bernoulli_unbatched": (lambda m, x: m.bernoulli(_x(m, (3,))) + x, (B, 3), 0),
    "bernoulli_in_dims1": (lambda m, x: m.bernoulli(x), (3, B), 1),
    "normal_tensors": (lambda m, x: m.normal(x, x), (B, 3), 0),
    "normal_mean_unbatched": (lambda m, x: m.normal(_x(m, (3,)), x), (B, 3), 0),
    "normal_mean_in_dims1": (lambda m, x: m.normal(x, 1.0), (3, B), 1),
    "poisson": (lambda m, x: m.poisson(x * 4), (B, 3), 0),
    "multinomial": (lambda m, x: m.multinomial(x, 2), (B, 3), 0),
    "multinomial_unbatched": (lambda m, x: m.multinomial(_x(m, (3,)), 3) + x.long(), (B, 3), 0),
    "dropout": (lambda m, x: m.nn.functional.dropout(x, 0.5), (B, 3), 0),
    "dropout_unbatched": (lambda m, x: m.nn.functional.dropout(_x(m, (3,)), 0.5) + x, (B, 3), 0),
    "dropout_module": (lambda m, x: m.nn.Dropout(0.25)(x * 2), (B, 3), 0),
    "alpha_dropout": (lambda m, x: m.nn.functional.alpha_dropout(x, 0.5, True), (B, 3), 0),
    "dropout2d": (lambda m, x: m.nn.functional.dropout2d(x.reshape(3, 1, 1), 0.5), (B, 3), 0),
    "dropout_eval": (lambda m, x: m.nn.functional.dropout(x, 0.5, training=False), (B, 3), 0),
    "dropout_in_dims1": (lambda m, x: m.nn.functional.dropout(x, 0.5), (3, B), 1),
    "dropout_inplace": (
        lambda m, x: m.nn.functional.dropout(x.clone(), 0.5, inplace=True),
        (B, 3),
        0,
    ),
    "feature_alpha_dropout": (
        lambda m, x: m.nn.functional.feature_alpha_dropout(x.reshape(3, 1, 1), 0.5, True),
        (B, 3),
        0,
    ),
    "dropout1d": (lambda m, x: m.nn.functional.dropout1d(x.reshape(1, 3, 1), 0.5), (B, 3), 0),
    "geometric_": (lambda m, x: x.clone().geometric_(0.4), (B, 3), 0),
    "log_normal_": (lambda m, x: x.clone().log_normal_(), (B, 3), 0),
    "cauchy_": (lambda m, x: x.clone().cauchy_(), (B, 3), 0),
    "randint_like_unbatched": (lambda m, x: m.randint_like(_x(m, (2,)), 3, 9), (B, 3), 0),
    "poisson_float64": (lambda m, x: m.poisson(x.double() * 20), (B, 3), 0),
    "normal_tensor_float": (lambda m, x: m.normal(x, 0.5), (B, 3), 0),
    "normal_float_tensor": (lambda m, x: m.normal(1.0, x), (B, 3), 0),
    "normal_mean_broadcast": (lambda m, x: m.normal(x, _x(m, (2, 1))), (B, 3), 0),
    "gumbel_softmax": (lambda m, x: m.nn.functional.gumbel_softmax(x, tau=0.5), (B, 3), 0),
    "distribution_sample": (lambda m, x: m.distributions.Normal(x, 1.0).sample(), (B, 3), 0),
    "bernoulli_p_float": (lambda m, x: m.bernoulli(x, 0.25), (B, 3), 0),
    "rand_like_of_view": (lambda m, x: m.rand_like(x.t()), (B, 2, 3), 0),
    "randn_like_of_view": (lambda m, x: m.randn_like(x.t()), (B, 2, 3), 0),
    "bernoulli_of_view": (lambda m, x: m.bernoulli(x.t()), (B, 2, 3), 0),
    "uniform_of_view_clone": (lambda m, x: x.t().clone().uniform_(), (B, 2, 3), 0),
    "normal_of_view": (lambda m, x: x.clone().t().normal_(), (B, 2, 3), 0),
    "dropout_of_view": (lambda m, x: m.nn.functional.dropout(x.t(), 0.5), (B, 2, 3), 0),
    "randn_like_16": (lambda m, x: m.randn_like(x), (B, 4, 5), 0),
    "normal_16_of_view": (lambda m, x: x.clone().transpose(0, 1).normal_(), (B, 4, 5), 0),
    "randn_in_vmap_of_grad": (
        lambda m, x: m.func.grad(lambda y: (y * m.randn(3)).sum())(x),
        (B, 3),
        0,
    ),
    "dropout_in_grad": (
        lambda m, x: m.func.grad(lambda y: m.nn.functional.dropout(y, 0.5).sum())(x),
        (B, 3),
        0,
    ),
    "standard_gamma": (lambda m, x: m._standard_gamma(x * 3), (B, 3), 0),
    "binomial": (lambda m, x: m.binomial(x * 0 + 5, x), (B, 3), 0),
    "binomial_count_unbatched": (lambda m, x: m.binomial(m.full((3,), 7.0), x), (B, 3), 0),
    "dirichlet": (lambda m, x: m.distributions.Dirichlet(x + 1).sample(), (B, 3), 0),
    "gamma_distribution": (lambda m, x: m.distributions.Gamma(x + 1, 2.0).rsample(), (B, 3), 0),
    "sample_dirichlet": (lambda m, x: m._sample_dirichlet(x + 1), (B, 3), 0),
    "rrelu": (lambda m, x: m.nn.functional.rrelu(-x, training=True), (B, 3), 0),
    "rrelu_eval": (lambda m, x: m.nn.functional.rrelu(-x), (B, 3), 0),
    "randn_out": (lambda m, x: m.randn(3, out=m.empty(3)), (B, 3), 0),
    "randperm_out": (lambda m, x: m.randperm(3, out=m.empty(3, dtype=m.long)), (B, 3), 0),
    "jacfwd_inside": (lambda m, x: m.func.jacfwd(lambda y: y * m.randn(3))(x), (B, 3), 0),
    "two_draws": (lambda m, x: m.randn(3) * m.rand_like(x), (B, 3), 0),
    "nested_different": (
        lambda m, x: m.func.vmap(lambda y: m.randn(2) + y.sum(), randomness="different")(x),
        (B, 3),
        0,
    ),
    "nested_same_inside": (
        lambda m, x: m.func.vmap(lambda y: m.randn(2) + y.sum(), randomness="same")(x),
        (B, 3),
        0,
    ),
    "nested_dropout": (
        lambda m, x: m.func.vmap(lambda y: m.nn.functional.dropout(y, 0.5), randomness="different")(
            x
        ),
        (B, 3),
        0,
    ),
}


# cases where PyTorch warns of its own internals: a batching rule it falls back from
# (BatchedFallback's performance warning, which leafgrad does not give) and a buffer its binomial
# batching resizes; the values are compared all the same
INTERNAL_WARNINGS = {"binomial_count_unbatched", "gamma_distribution"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_random_ops_in_vmap(case, mode):
    body, shape, in_dims = CASES[case]

    def run(m):
        m.manual_seed(0)
        x = _x(m, shape)
        out = m.func.vmap(lambda a: body(m, a), in_dims=in_dims, randomness=mode)(x)
        return out, m.rand(2)  # the generator's stream goes on from the same place

    both(run, check_warnings=case not in INTERNAL_WARNINGS)


@pytest.mark.parametrize("mode", ("same", "different"))
def test_outer_randomness_applies_inside(mode):
    def run(m):
        m.manual_seed(1)
        x = _x(m, (B, 3))
        inner = m.func.vmap(lambda y: m.randn(2) * y, randomness="different")
        return m.func.vmap(inner, randomness=mode)(x), m.randn(1)

    both(run)


def test_per_sample_grads_with_dropout():
    """The per-sample-gradients recipe with dropout: every sample drops its own units."""

    def run(m):
        m.manual_seed(2)
        model = m.nn.Sequential(m.nn.Linear(3, 5), m.nn.Dropout(0.5), m.nn.Linear(5, 1))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = m.randn(B, 3)

        def loss(p, sample):
            return m.func.functional_call(model, p, (sample.unsqueeze(0),)).sum()

        m.manual_seed(3)
        grads = m.func.vmap(m.func.grad(loss), in_dims=(None, 0), randomness="different")(params, x)
        return [grads[k] for k in sorted(grads)]

    both(run, rtol=1e-6, atol=1e-6)


def test_backward_through_vmap_with_dropout():
    """The transform's backward sees the draws the forward made."""

    def run(m):
        m.manual_seed(4)
        w = m.randn(3, requires_grad=True)
        x = _x(m, (B, 3))
        m.manual_seed(5)
        out = m.func.vmap(
            lambda a: m.nn.functional.dropout(a * w, 0.5).sum(), randomness="different"
        )(x)
        out.sum().backward()
        return out.detach(), w.grad, m.rand(2)  # (its node is TransformBackward0 in leafgrad)

    both(run, rtol=1e-6, atol=1e-6)


def test_different_with_a_generator():
    def run(m):
        g = m.Generator().manual_seed(7)
        x = _x(m, (B, 3))
        return m.func.vmap(lambda a: m.rand(3, generator=g) + a, randomness="different")(x)

    both(run)


@pytest.mark.parametrize("mode", MODES)
def test_jacfwd_randomness(mode):
    """jacfwd runs the function under vmap: its ``randomness`` flag is that vmap's."""

    def run(m):
        m.manual_seed(6)
        x = _x(m, (3,))
        jac = m.func.jacfwd(lambda y: y * m.randn(3) + m.rand_like(y), randomness=mode)(x)
        return jac, m.rand(2)

    both(run)


@pytest.mark.parametrize("name", ["_is_all_true", "_is_any_true"])
@pytest.mark.parametrize(
    "values", [[True, False], [True, True], [False, False], [], [[True], [False]]]
)
def test_is_all_true_and_is_any_true(name, values):
    both(lambda m: getattr(m, name)(m.tensor(values, dtype=m.bool)))


@pytest.mark.parametrize("name", ["_is_all_true", "_is_any_true"])
def test_is_all_true_refuses_other_dtypes(name):
    both(lambda m: getattr(m, name)(m.tensor([1, 0])))


@pytest.mark.parametrize("name", ["_is_all_true", "_is_any_true"])
def test_is_all_true_inside_vmap_reads_the_whole_batch(name):
    """PyTorch's batch rule reduces every sample (distribution validation relies on it)."""

    def run(m):
        x = m.tensor([[0.7, 0.6], [0.9, 0.1]])
        return m.func.vmap(lambda a: getattr(m, name)(a > 0.5))(x)

    both(run)
