"""try/except/else/finally and with blocks whose bodies trace without raising; raise caught in the frame;
and exceptions that escape (the compiled call must raise exactly what the plain call raises)."""
import contextlib

from .registry import case


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def try_except_else_finally(x):
    try:
        y = x * 2
    except ZeroDivisionError:
        y = x
    else:
        y = y + 1
    finally:
        z = 3
    return y * z


@case(calls=lambda a: [(a.f(3, 2),), (a.f(4),), (a.f(2, 5),)], nodes=1)
def raise_caught_in_frame(x):
    try:
        if x.ndim != 2:
            raise ValueError("need a matrix")
        y = x.sum(axis=1)
    except ValueError:
        y = x.sum()
    return y


@case(calls=lambda a: [(a.f(3), {}), (a.f(3), {"scale": 2.0}), (a.f(2, 2), {})], nodes=1)
def key_error_fallback(x, opts):
    try:
        s = opts["scale"]
    except KeyError:
        s = 1.0
    return x * s


class _Scope:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def user_context_manager(x):
    with _Scope("block") as scope:
        y = x + 1
    return y * 2, scope.name


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=1)
def nullcontext_block(x):
    with contextlib.nullcontext(x) as v:
        return v * 2


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=3)
def try_finally_in_loop_with_break(x):
    for k in range(5):
        try:
            if k == 3:
                break
            x = x + k
        finally:
            pass
    return x


class _ShapeError(ValueError):
    pass


@case(calls=lambda a: [(a.f(2, 2),), (a.f(3, 2),)], nodes=[1, 2])
def custom_exception_caught(x):
    try:
        if x.shape[0] != x.shape[1]:
            raise _ShapeError(f"not square: {x.shape}")
        out = x.trace()
    except _ShapeError as err:
        out = x.sum() * len(str(err))
    return out


@case(calls=lambda a: [(a.f(3, 3),), (a.f(2, 2),), (a.f(4),)], nodes=2, raises=[2])
def validation_error_escapes(x):
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d array, got {x.ndim}-d with shape {x.shape}")
    return x.T @ x


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def exception_message_captured(x):
    try:
        raise RuntimeError("step %d failed" % x.ndim)
    except RuntimeError as e:
        message = str(e)
    return message, x - 1, x.sum()


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def nested_with_blocks(x):
    with _Scope("outer"):
        with _Scope("inner"), contextlib.nullcontext():
            y = x * 3
        y = y - 1
    return y
