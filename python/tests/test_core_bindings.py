"""What the Python package takes from the C++ rather than writing again: Keras's plateau and the
overhead bench's statistics."""

import math

import pytest

from recompdiag import _core


def drops(plateau, epochs, lr=0.1):
    """The plateau's answers over `epochs` epochs of one unchanging loss, the lr following them."""
    out = []
    for _ in range(epochs):
        new_lr = plateau.on_epoch_end(1.0, lr)
        out.append(new_lr)
        lr = new_lr or lr
    return out


def test_plateau_drops_after_patience_and_waits_out_its_cooldown():
    # Keras: the first loss is the best; patience 2 epochs without improvement, then the lr halves.
    assert drops(_core.ReduceLrOnPlateau(factor=0.5, patience=2, min_delta=0.0), 5) == [
        None, None, pytest.approx(0.05), None, pytest.approx(0.025)]
    # A cooldown of 2 epochs after a drop: the next drop comes an epoch later.
    assert drops(_core.ReduceLrOnPlateau(factor=0.5, patience=2, min_delta=0.0, cooldown=2), 6) == [
        None, None, pytest.approx(0.05), None, None, pytest.approx(0.025)]
    p = _core.ReduceLrOnPlateau(factor=0.5, patience=2, min_delta=0.0)
    drops(p, 2)
    p.reset()
    assert drops(p, 2) == [None, None]  # history forgotten: the count starts again


def test_plateau_defaults_are_keras():
    p = _core.ReduceLrOnPlateau()
    drops = [p.on_epoch_end(1.0, 0.01) for _ in range(12)]
    assert drops[:10] == [None] * 10  # patience 10
    assert drops[10] == pytest.approx(0.001)  # factor 0.1


def test_arm_ratio_finds_a_paired_slowdown_and_refuses_bad_input():
    base = [10.0 + 0.5 * math.sin(i) for i in range(20)]
    slower = [1.2 * b * (1.0 + 0.01 * math.cos(3 * i)) for i, b in enumerate(base)]
    r = _core.arm_ratio(base, slower)
    assert r["ratio"] == pytest.approx(1.2, rel=0.02)
    assert r["low"] < r["ratio"] < r["high"]
    assert not r["includes_one"]
    assert r["rounds"] == 20
    same = _core.arm_ratio(base, [b * (1.0 + 0.01 * math.cos(3 * i)) for i, b in enumerate(base)])
    assert same["includes_one"]
    with pytest.raises(ValueError):
        _core.arm_ratio(base, slower, confidence=95)
    with pytest.raises(ValueError):
        _core.arm_ratio(base, slower[:5])


def test_plateau_refuses_what_the_command_line_refuses():
    # PlateauOptions::validate, the trainer's check, names Python's arguments.
    from recompdiag import InputError

    with pytest.raises(InputError, match=r"^factor must be in \(0, 1\)$"):
        _core.ReduceLrOnPlateau(factor=1.5)
    with pytest.raises(InputError, match=r"^patience and cooldown must be >= 0$"):
        _core.ReduceLrOnPlateau(cooldown=-1)
    with pytest.raises(InputError, match=r"^min_lr and min_delta must be >= 0$"):
        _core.ReduceLrOnPlateau(min_lr=float("nan"))
