"""``torch.special``'s Bessel functions J0, J1, Y0, Y1, the modified K0, K1 (and their
``exp(x)``-scaled forms) and the Airy function Ai.

Each is PyTorch's CPU kernel (``ATen/native/Math.h``, a port of Cephes) elementwise in
``jax.numpy``: the same coefficients, read in the input's dtype as ``static const T[]`` reads
them, the same Horner and Chebyshev loops in the same operation order, and the same special cases
in the same order (``jnp.where`` over all branches, PyTorch's early returns first). Ai's power
series runs, as PyTorch's ``while`` loop does, until each element's last term is below epsilon;
the other elements' steps are masked. K0 and K1 use PyTorch's own I0 and I1 below two.

Note [Rounding as PyTorch's build]: GCC compiles PyTorch's kernels (its AVX2 and AVX-512
builds) with ``a * b + c`` fused into one FMA, and XLA's LLVM fuses the same expressions the same
way; where XLA would round otherwise (``a / 3`` as ``a * (1/3)``, ``a / b / c`` as
``a / (b * c)``, ``a / sqrt(b)`` as ``a * rsqrt(b)``) the code below keeps PyTorch's rounding,
and float32 ``exp`` and ``log`` are taken as glibc takes them. The values then agree with
PyTorch's to the last bit, but for an ulp or a few (XLA's float64 ``exp``; elements XLA's vector
code leaves unfused) and for results below the smallest normal number, which XLA's CPU flushes
to zero.

PyTorch records no gradient for them (the result never requires grad); Half, BFloat16 and complex
inputs are refused as its CPU kernels refuse them.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .api import register_ops
from .polynomials import _cases, _rule, _unary_frontend
from .table import OpDef

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
]

_PI_4 = 0.785398163397448309615660845819875721
_3PI_4 = 2.356194490192344928846982537459627163
_SQRT_2_PI = 0.797884560802865355879892119868763737  # sqrt(2 / pi)
_2_PI = 0.636619772367581343075535053490057448  # 2 / pi

# J0 and Y0 at large x (P and Q of the asymptotic expansion)
_PP0 = (
    7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e00,
    5.44725003058768775090e00, 8.74716500199817011941e00, 5.30324038235394892183e00,
    9.99999999999999997821e-01,
)  # fmt: skip
_PQ0 = (
    9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e00,
    5.47097740330417105182e00, 8.76190883237069594232e00, 5.30605288235394617618e00,
    1.00000000000000000218e00,
)  # fmt: skip
_QP0 = (
    -1.13663838898469149931e-02, -1.28252718670509318512e00, -1.95539544257735972385e01,
    -9.32060152123768231369e01, -1.77681167980488050595e02, -1.47077505154951170175e02,
    -5.14105326766599330220e01, -6.05014350600728481186e00,
)  # fmt: skip
_QQ0 = (
    6.43178256118178023184e01, 8.56430025976980587198e02, 3.88240183605401609683e03,
    7.24046774195652478189e03, 5.93072701187316984827e03, 2.06209331660327847417e03,
    2.42005740240291393179e02,
)  # fmt: skip
# J0 at small x
_RP0 = (
    -4.79443220978201773821e09, 1.95617491946556577543e12, -2.49248344360967716204e14,
    9.70862251047306323952e15,
)  # fmt: skip
_RQ0 = (
    4.99563147152651017219e02, 1.73785401676374683123e05, 4.84409658339962045305e07,
    1.11855537045356834862e10, 2.11277520115489217587e12, 3.10518229857422583814e14,
    3.18121955943204943306e16, 1.71086294081043136091e18,
)  # fmt: skip
# Y0 at small x
_YP0 = (
    1.55924367855235737965e04, -1.46639295903971606143e07, 5.43526477051876500413e09,
    -9.82136065717911466409e11, 8.75906394395366999549e13, -3.46628303384729719441e15,
    4.42733268572569800351e16, -1.84950800436986690637e16,
)  # fmt: skip
_YQ0 = (
    1.04128353664259848412e03, 6.26107330137134956842e05, 2.68919633393814121987e08,
    8.64002487103935000337e10, 2.02979612750105546709e13, 3.17157752842975028269e15,
    2.50596256172653059228e17,
)  # fmt: skip

# J1 and Y1 at large x
_PP1 = (
    7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e00,
    5.11207951146807644818e00, 8.42404590141772420927e00, 5.21451598682361504063e00,
    1.00000000000000000254e00,
)  # fmt: skip
_PQ1 = (
    5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e00,
    5.07386386128601488557e00, 8.39985554327604159757e00, 5.20982848682361821619e00,
    9.99999999999999997461e-01,
)  # fmt: skip
_QP1 = (
    5.10862594750176621635e-02, 4.98213872951233449420e00, 7.58238284132545283818e01,
    3.66779609360150777800e02, 7.10856304998926107277e02, 5.97489612400613639965e02,
    2.11688757100572135698e02, 2.52070205858023719784e01,
)  # fmt: skip
_QQ1 = (
    7.42373277035675149943e01, 1.05644886038262816351e03, 4.98641058337653607651e03,
    9.56231892404756170795e03, 7.99704160447350683650e03, 2.82619278517639096600e03,
    3.36093607810698293419e02,
)  # fmt: skip
# J1 at small x
_RP1 = (
    -8.99971225705559398224e08, 4.52228297998194034323e11, -7.27494245221818276015e13,
    3.68295732863852883286e15,
)  # fmt: skip
_RQ1 = (
    6.20836478118054335476e02, 2.56987256757748830383e05, 8.35146791431949253037e07,
    2.21511595479792499675e10, 4.74914122079991414898e12, 7.84369607876235854894e14,
    8.95222336184627338078e16, 5.32278620332680085395e18,
)  # fmt: skip
# Y1 at small x
_YP1 = (
    1.26320474790178026440e09, -6.47355876379160291031e11, 1.14509511541823727583e14,
    -8.12770255501325109621e15, 2.02439475713594898196e17, -7.78877196265950026825e17,
)  # fmt: skip
_YQ1 = (
    5.94301592346128195359e02, 2.35564092943068577943e05, 7.34811944459721705660e07,
    1.87601316108706159478e10, 3.88231277496238566008e12, 6.20557727146953693363e14,
    6.87141087355300489866e16, 3.97270608116560655612e18,
)  # fmt: skip

# I0 and I1: Chebyshev coefficients on [0, 8] (A) and (8, inf) (B)
_I0A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-09,
    -1.30002500998624804212e-08, 6.04699502254191894932e-08, -2.67079385394061173391e-07,
    1.11738753912010371815e-06, -4.41673835845875056359e-06, 1.64484480707288970893e-05,
    -5.75419501008210370398e-05, 1.88502885095841655729e-04, -5.76375574538582365885e-04,
    1.63947561694133579842e-03, -4.32430999505057594430e-03, 1.05464603945949983183e-02,
    -2.37374148058994688156e-02, 4.93052842396707084878e-02, -9.49010970480476444210e-02,
    1.71620901522208775349e-01, -3.04682672343198398683e-01, 6.76795274409476084995e-01,
)  # fmt: skip
_I0B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-09, 2.26666899049817806459e-08, 2.04891858946906374183e-07,
    2.89137052083475648297e-06, 6.88975834691682398426e-05, 3.36911647825569408990e-03,
    8.04490411014108831608e-01,
)  # fmt: skip
_I1A = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-09,
    9.38153738649577178388e-09, -4.44505912879632808065e-08, 2.00329475355213526229e-07,
    -8.56872026469545474066e-07, 3.47025130813767847674e-06, -1.32731636560394358279e-05,
    4.78156510755005422638e-05, -1.61760815825896745588e-04, 5.12285956168575772895e-04,
    -1.51357245063125314899e-03, 4.15642294431288815669e-03, -1.05640848946261981558e-02,
    2.47264490306265168283e-02, -5.29459812080949914269e-02, 1.02643658689847095384e-01,
    -1.76416518357834055153e-01, 2.52587186443633654823e-01,
)  # fmt: skip
_I1B = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-09, -2.63146884688951950684e-08, -2.51223623787020892529e-07,
    -3.88256480887769039346e-06, -1.10588938762623716291e-04, -9.76109749136146840777e-03,
    7.78576235018280120474e-01,
)  # fmt: skip

# K0 and K1: Chebyshev coefficients on [0, 2] (A) and (2, inf) (B)
_K0A = (
    1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
    1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
    -5.35327393233902768720e-01,
)  # fmt: skip
_K0B = (
    5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
    6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
    -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
    1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
    2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
    -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
    2.44030308206595545468e00,
)  # fmt: skip
_K1A = (
    -7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
    -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
    -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
    -3.53155960776544875667e-01, 1.52530022733894777053e00,
)  # fmt: skip
_K1B = (
    -5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
    1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
    -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
    3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
    2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
    -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
    1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
    2.72062619048444266945e00,
)  # fmt: skip

# Ai: the rational approximation above 2.09 (AN/AD) and the asymptotic one below -2.09
_AN = (
    3.46538101525629032477e-01, 1.20075952739645805542e01, 7.62796053615234516538e01,
    1.68089224934630576269e02, 1.59756391350164413639e02, 7.05360906840444183113e01,
    1.40264691163389668864e01, 9.99999999999999995305e-01,
)  # fmt: skip
_AD = (
    5.67594532638770212846e-01, 1.47562562584847203173e01, 8.45138970141474626562e01,
    1.77318088145400459522e02, 1.64234692871529701831e02, 7.14778400825575695274e01,
    1.40959135607834029598e01, 1.00000000000000000470e00,
)  # fmt: skip
_AFN = (
    -1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
    -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
    -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08,
)  # fmt: skip
_AFD = (
    1.33560420706553243746e01, 3.26825032795224613948e01, 2.67367040941499554804e01,
    9.18707402907259625840e00, 1.47529146771666414581e00, 1.15687173795188044134e-01,
    4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07,
)  # fmt: skip
_AGN = (
    1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e00,
    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
    5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
    8.11789239554389293311e-08, 3.41551784765923618484e-10,
)  # fmt: skip
_AGD = (
    9.30892908077441974853e00, 1.98352928718312140417e01, 1.55646628932864612953e01,
    5.47686069422975497931e00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
    4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
    4.91834570062930015649e-09,
)  # fmt: skip


def _libm(fn):
    """``fn`` as glibc's ``expf``/``logf`` take it for float32: in double, rounded once (XLA's own
    float32 ``exp`` and ``log`` are a few ulp away from glibc's)."""

    def f(x):
        if x.dtype == jnp.float32:
            return fn(x.astype(jnp.float64)).astype(x.dtype)
        return fn(x)

    return f


_exp, _log = _libm(jnp.exp), _libm(jnp.log)


def _polevl(w, coeffs):
    """PyTorch's Horner loop: ``acc = acc * w + c``, from zero (each ``c`` in ``w``'s dtype)."""
    acc = jnp.zeros_like(w)
    for c in coeffs:
        acc = acc * w + c
    return acc


def _chbevl(w, coeffs):
    """PyTorch's inlined Chebyshev sum ``0.5 * (a - p)`` of the series ``coeffs`` at ``w``,
    written ``0.5 * a - 0.5 * p`` (the same number): a following ``h - u * v`` then fuses
    ``u * v``, as GCC does, rather than a product ``0.5 * (a - p)`` (Note [Rounding as
    PyTorch's build])."""
    p = q = jnp.zeros_like(w)
    a = jnp.full_like(w, coeffs[0])
    for c in coeffs[1:]:
        p, q = q, a
        a = w * q - p + c
    return 0.5 * a - 0.5 * p


def _sqrt(x):
    """``sqrt(x)`` that XLA cannot fold into a following division as ``* rsqrt(x)`` (PyTorch
    divides by the rounded square root)."""
    return lax.optimization_barrier(jnp.sqrt(x))


def _div(a, b):
    """``a / b`` rounded as PyTorch's kernel rounds it: XLA's simplifier would turn ``a / 3``
    into ``a * (1/3)`` (even for a barred scalar ``3`` once broadcast), ``a / b / c`` into
    ``a / (b * c)`` and ``1 / (a / b)`` into ``b / a``."""
    b = jnp.full_like(a, b) if isinstance(b, float) else b
    return lax.optimization_barrier(a / lax.optimization_barrier(b))


def _asymptotic(x, w, pp, pq, qp, qq, shift, sine):
    """J (``sine=False``) or Y at large ``x``: ``P cos(x - shift) - 5/x Q sin(x - shift)``, or
    ``P sin + 5/x Q cos``, times ``sqrt(2 / (pi x))``; the four polynomials are in ``w``."""
    p = _polevl(w, pp) / _polevl(w, pq)
    q = 5.0 / x * (_polevl(w, qp) / _polevl(w, qq))
    s, c = jnp.sin(x - shift), jnp.cos(x - shift)
    out = p * s + q * c if sine else p * c - q * s
    return out * _SQRT_2_PI / _sqrt(x)


def _bessel_j0(x):
    x = jnp.where(x < 0, -x, x)
    xx = x * x
    small = (xx - 5.78318596294678452118e00) * (xx - 3.04712623436620863991e01)
    small = small * _polevl(xx, _RP0) / _polevl(xx, _RQ0)
    large = _asymptotic(x, 25.0 / xx, _PP0, _PQ0, _QP0, _QQ0, _PI_4, False)
    return _cases(large, (x < 0.00001, 1.0 - xx / 4.0), (x <= 5.0, small))


def _bessel_j1(x):
    neg = x < 0
    x = jnp.where(neg, -x, x)
    xx = x * x
    small = _polevl(xx, _RP1) / _polevl(xx, _RQ1) * x
    small = small * (xx - 1.46819706421238932572e01) * (xx - 4.92184563216946036703e01)
    large = _asymptotic(x, 5.0 / x * (5.0 / x), _PP1, _PQ1, _QP1, _QQ1, _3PI_4, False)
    out = jnp.where(x <= 5.0, small, large)
    return jnp.where(neg, -out, out)


def _bessel_y0(x):
    xx = x * x
    small = _polevl(xx, _YP0) / _polevl(xx, _YQ0) + _2_PI * _log(x) * _bessel_j0(x)
    large = _asymptotic(x, 25.0 / xx, _PP0, _PQ0, _QP0, _QQ0, _PI_4, True)
    return _cases(large, (x == 0, -jnp.inf), (x < 0, jnp.nan), (x <= 5.0, small))


def _bessel_y1(x):
    xx = x * x
    small = x * (_polevl(xx, _YP1) / _polevl(xx, _YQ1))
    small = small + _2_PI * (_bessel_j1(x) * _log(x) - 1.0 / x)
    large = _asymptotic(x, 5.0 / x * (5.0 / x), _PP1, _PQ1, _QP1, _QQ1, _3PI_4, True)
    return _cases(large, (x == 0, -jnp.inf), (x < 0, jnp.nan), (x <= 5.0, small))


def _i0(x):
    """PyTorch's ``modified_bessel_i0_forward``."""
    x = jnp.abs(x)
    e = _exp(x)
    small = e * _chbevl(x / 2.0 - 2.0, _I0A)
    large = e * _chbevl(32.0 / x - 2.0, _I0B) / _sqrt(x)
    return jnp.where(x <= 8.0, small, large)


def _i1(x):
    """PyTorch's ``modified_bessel_i1_forward``."""
    ax = jnp.abs(x)
    e = _exp(ax)
    small = _chbevl(ax / 2.0 - 2.0, _I1A) * ax * e
    large = e * _chbevl(32.0 / ax - 2.0, _I1B) / _sqrt(ax)
    out = jnp.where(ax <= 8.0, small, large)
    return jnp.where(x < 0, -out, out)


def _modified_bessel_k(order: int, scaled: bool):
    a, b = (_K0A, _K0B) if order == 0 else (_K1A, _K1B)

    def forward(x):
        half = _chbevl(x * x - 2.0, a)
        if order == 0 and not scaled:
            # PyTorch writes ``std::log(0.5 * x)`` with a double 0.5: for float32 the log, its
            # product and the difference are taken in double
            wide = jnp.float64
            log = _log(0.5 * x.astype(wide))
            small = (half.astype(wide) - log * _i0(x).astype(wide)).astype(x.dtype)
        elif order == 0:
            small = half - _log(0.5 * x) * _i0(x)
        else:
            small = _log(0.5 * x) * _i1(x) + half / x
        large = _chbevl(8.0 / x - 2.0, b)
        if scaled:
            small = small * _exp(x)
            large = large / _sqrt(x)
        else:
            large = _exp(-x) * large / _sqrt(x)
        return _cases(large, (x == 0, jnp.inf), (x < 0, jnp.nan), (x <= 2.0, small))

    return forward


def _airy_series(x):
    """Ai's Maclaurin series ``0.355 f - 0.259 g``, summed until the last term of ``f`` is below
    epsilon (a NaN stops it at once)."""
    eps = jnp.finfo(x.dtype).eps
    one = jnp.ones_like(x)
    z = x * x * x

    def cond(state):
        return jnp.any(state[-1] > eps)

    def body(state):
        m, n, f, g, k, t = state
        m = m * z
        k = k + 1.0
        m = _div(m, k)
        n = n * z
        k = k + 1.0
        n = _div(n, k)
        m = _div(m, k)
        f = f + m
        k = k + 1.0
        n = _div(n, k)
        g = g + n
        new = (m, n, f, g, k, jnp.abs(_div(m, f)))
        live = state[-1] > eps
        return tuple(jnp.where(live, a, b) for a, b in zip(new, state))

    _, _, f, g, _, _ = lax.while_loop(cond, body, (one, x, one, x, one, one))
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g


def _airy_ai(x):
    below, above = x < -2.09, x >= 2.09
    # x < -2.09: the asymptotic form in z = 1 / zeta
    r = jnp.sqrt(-x)
    zeta = _div(-2.0 * x * r, 3.0)
    z = 1.0 / zeta
    zz = z * z
    t = zeta + 0.25 * jnp.pi
    f = 1.0 + zz * _polevl(zz, _AFN) / _polevl(zz, _AFD)
    g = z * _polevl(zz, _AGN) / _polevl(zz, _AGD)
    neg = 5.64189583547756286948e-01 / _sqrt(r) * (jnp.sin(t) * f - jnp.cos(t) * g)
    # x >= 2.09: the rational form in 1 / zeta
    zeta = _div(2.0 * x * jnp.sqrt(x), 3.0)
    w = 1.0 / zeta
    pos = 5.64189583547756286948e-01 * (_polevl(w, _AN) / _polevl(w, _AD))
    pos = pos / (2.0 * jnp.sqrt(jnp.sqrt(x)) * _exp(zeta))
    # in between (NaN included): the power series; elsewhere it runs at 0, one step
    series = _airy_series(jnp.where(below | above, jnp.zeros_like(x), x))
    return _cases(
        series,
        (jnp.isinf(x), jnp.nan),
        (x > 103.892, 0.0),
        (below, neg),
        (above, pos),
    )


_FORWARDS = {
    "airy_ai": _airy_ai,
    "bessel_j0": _bessel_j0,
    "bessel_j1": _bessel_j1,
    "bessel_y0": _bessel_y0,
    "bessel_y1": _bessel_y1,
    "modified_bessel_k0": _modified_bessel_k(0, False),
    "modified_bessel_k1": _modified_bessel_k(1, False),
    "scaled_modified_bessel_k0": _modified_bessel_k(0, True),
    "scaled_modified_bessel_k1": _modified_bessel_k(1, True),
    "modified_bessel_i0": _i0,
    "modified_bessel_i1": _i1,
}

register_ops(
    *(
        OpDef("special_" + name, fwd, "", ("self",), _rule(name + "_cpu"), differentiable=())
        for name, fwd in _FORWARDS.items()
    )
)

airy_ai = _unary_frontend("airy_ai", "the Airy function Ai", "x")
bessel_j0 = _unary_frontend("bessel_j0", "the Bessel function of the first kind J0")
bessel_j1 = _unary_frontend("bessel_j1", "the Bessel function of the first kind J1")
bessel_y0 = _unary_frontend("bessel_y0", "the Bessel function of the second kind Y0")
bessel_y1 = _unary_frontend("bessel_y1", "the Bessel function of the second kind Y1")
modified_bessel_k0 = _unary_frontend("modified_bessel_k0", "the modified Bessel function K0")
modified_bessel_k1 = _unary_frontend("modified_bessel_k1", "the modified Bessel function K1")
scaled_modified_bessel_k0 = _unary_frontend("scaled_modified_bessel_k0", "``exp(x) * K0(x)``", "x")
scaled_modified_bessel_k1 = _unary_frontend("scaled_modified_bessel_k1", "``exp(x) * K1(x)``", "x")
