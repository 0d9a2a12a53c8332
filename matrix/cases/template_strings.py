"""Template strings (PEP 750, 3.14+ syntax; loaded only where the running table has
BUILD_TEMPLATE): BUILD_INTERPOLATION / BUILD_TEMPLATE are declared unsupported, so the
template is built natively at a graph break and the array work around it is compiled."""
from matrix.cases import case
from matrix.cases.inputs import arr, args


@case("template_strings", args(arr(4), 3))
def template_label_around_math(x, n):
    y = x * 2.0
    label = t"scale {n} of {len(x)}"
    return y + len(label.strings) + n


@case("template_strings", args(arr(3)))
def template_interpolating_an_array(x):
    tpl = t"{x!r:>10}"
    interpolation = tpl.interpolations[0]
    return interpolation.value * 2.0 + len(interpolation.format_spec)
