"""Eq. 7 force law on single contacts, integrated at a fixed 10 kHz step (RK4 with the kernel
evaluated at every stage): restitution, energy, Coulomb deceleration, stick without chatter."""
import math

import numpy as np
import pytest

from sim_stand.contact import Builder, ContactModel

DT = 1e-4  # 10 kHz


def point_on_plane(k, c, mu=0.0, push_only=True, v_eps=1e-3):
    """A point at the origin of link 0 against the passive plane x = 0 facing -x."""
    b = Builder()
    mat = b.material("m", k, c, mu, max_penetration=1.0, slip_velocity=v_eps, push_only=push_only)
    pl = b.annulus("plane", (0, 0, 0), (-1, 0, 0), 0.0, math.inf, 1.0)
    pt = b.point("pt", (0, 0, 0), link=0)
    b.pair("pt/plane", pt, pl, mat)
    return ContactModel(b.pack(), check=False)


def accel(model, y, mass, f_ext):
    """y = [x(3), v(3)] of the point mass -> acceleration (force on the active side)."""
    pose = np.zeros((1, 7))
    pose[0, :3] = y[:3]
    pose[0, 3] = 1.0
    tw = np.zeros((1, 6))
    tw[0, :3] = y[3:]
    model.evaluate(pose, tw, commit=False)
    return (model.wrench_links[0, :3] + f_ext) / mass


def rk4(model, y, mass, f_ext=np.zeros(3)):
    def f(y):
        return np.concatenate((y[3:], accel(model, y, mass, f_ext)))
    k1 = f(y)
    k2 = f(y + 0.5 * DT * k1)
    k3 = f(y + 0.5 * DT * k2)
    k4 = f(y + DT * k3)
    return y + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def bounce(k, c, m, v0=0.3, push_only=True):
    model = point_on_plane(k, c, push_only=push_only)
    y = np.array([-0.002, 0, 0, v0, 0, 0])   # starts 2 mm in front of the plane
    emax = 0.0
    e0 = 0.5 * m * v0 ** 2
    for _ in range(200000):
        y = rk4(model, y, m)
        pen = max(y[0], 0.0)
        e = 0.5 * m * y[3] ** 2 + 0.5 * k * pen ** 2
        emax = max(emax, abs(e - e0) / e0)
        if y[0] < -0.001 and y[3] < 0:
            return -y[3] / v0, emax
    raise AssertionError("no rebound")


@pytest.mark.parametrize("zeta", [0.05, 0.1, 0.2])
def test_restitution_of_linear_spring_damper(zeta):
    """CoR = exp(-zeta pi / sqrt(1 - zeta^2)) within 0.5 % at 10 kHz for the linear law
    (push_only = false: the contact ends when Delta returns to 0, as in the analytic
    solution). m = 50 kg, k = 2e6 N/m (the preset's guide stiffness): 31 ms period."""
    m, k = 50.0, 2.0e6
    c = 2 * zeta * math.sqrt(k * m)
    cor, _ = bounce(k, c, m, push_only=False)
    ref = math.exp(-zeta * math.pi / math.sqrt(1 - zeta ** 2))
    assert abs(cor / ref - 1) < 0.005, (cor, ref)


@pytest.mark.parametrize("zeta", [0.05, 0.1, 0.2])
def test_restitution_push_only(zeta):
    """With the push-only clip (the default) the contact ends when k D + c D' reaches 0, at
    w_d t* = pi - atan(2 zeta sqrt(1 - zeta^2) / (1 - 2 zeta^2)); the CoR is then
    exp(-zeta w t*) |cos w_d t* - zeta / sqrt(1 - zeta^2) sin w_d t*| (docs/models/contact.md
    §3.3), above the unclipped value. Within 0.5 % at 10 kHz."""
    m, k = 50.0, 2.0e6
    c = 2 * zeta * math.sqrt(k * m)
    cor, _ = bounce(k, c, m, push_only=True)
    s = math.sqrt(1 - zeta ** 2)
    phi = math.pi - math.atan2(2 * zeta * s, 1 - 2 * zeta ** 2)
    ref = math.exp(-zeta / s * phi) * abs(math.cos(phi) - zeta / s * math.sin(phi))
    assert abs(cor / ref - 1) < 0.005, (cor, ref)
    assert cor > math.exp(-zeta * math.pi / s)


def test_energy_conserved_without_damping():
    """Zero damping: CoR = 1 within 1e-4 and the energy (kinetic + contact spring) stays
    within 1e-4 of its initial value through the whole impact at 10 kHz."""
    m, k = 50.0, 2.0e6
    cor, emax = bounce(k, 0.0, m)
    assert abs(cor - 1) < 1e-4
    assert emax < 1e-4


def slide(mu, v0, g=9.81, m=10.0, k=1e6, steps=4000, f_t=None):
    """Block (point mass) pressed on the plane by gravity along +x, sliding along y; starts at
    its static penetration so the normal force is m g from the first step."""
    zeta = 1.0
    model = point_on_plane(k, 2 * zeta * math.sqrt(k * m), mu=mu)
    y = np.array([m * g / k, 0, 0, 0, v0, 0])
    vs = np.empty(steps)
    for i in range(steps):
        fe = np.array([m * g, 0.0 if f_t is None else f_t(i * DT), 0.0])
        y = rk4(model, y, m, fe)
        vs[i] = y[4]
    return vs


def test_sliding_block_decelerates_at_mu_g():
    mu, g, v0 = 0.3, 9.81, 0.5
    vs = slide(mu, v0, g)
    t = np.arange(1, len(vs) + 1) * DT
    sl = vs > 0.02                            # sliding phase, well above v_eps = 1 mm/s
    a = -np.polyfit(t[sl], vs[sl], 1)[0]
    assert abs(a / (mu * g) - 1) < 0.005, a
    # stop: velocity decays to rest without reversing (no stick/slip chatter)
    stop = np.argmax(vs < 1e-3)
    tail = vs[stop:]
    assert np.all(tail > -1e-9)
    assert np.all(np.diff(tail) <= 1e-12)
    assert tail[-1] < 1e-8


def test_stick_slip_transitions_do_not_chatter():
    """A tangential force ramping 0 -> 1.5 mu m g -> 0 over 0.4 s: the block sticks (creep
    below v_eps), slips once when the force passes mu m g, and sticks again once; the
    velocity never changes sign and the slip/stick flag switches exactly twice."""
    mu, g, m = 0.3, 9.81, 10.0
    fmax = 1.5 * mu * m * g

    def f_t(t):
        return fmax * (t / 0.2 if t < 0.2 else max(0.0, (0.4 - t) / 0.2))
    vs = slide(mu, 0.0, g, m, steps=6000, f_t=f_t)
    assert np.all(vs > -1e-9)
    slipping = vs > 2e-3
    assert np.count_nonzero(np.diff(slipping.astype(int))) == 2
    # while stuck (force below mu m g) the creep is the regularisation's: v = F v_eps / (mu N)
    i = int(0.1 / DT)
    assert abs(vs[i] - f_t(i * DT) * 1e-3 / (mu * m * g)) < 1e-5
