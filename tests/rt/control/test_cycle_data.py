"""The cycle's data, declared once (issue 39; rt/control/cycle_data.py): the compiled cycle
reads every declared array by its name with its declared kind, and a declaration that binds an
array to another's source — two arrays swapped — is refused, as is a packing whose arrays do not
have their declared shapes."""
from __future__ import annotations

import inspect
import itertools
import re
from dataclasses import replace

import pytest

from rt.control import cycle_data as CD
from rt.control import cycle_store as CS
from rt.control import kernels as CK


def test_the_compiled_cycle_reads_each_declared_array_by_name_with_its_kind():
    src = inspect.getsource(CK.hil_cycle_packed.py_func)
    reads = re.findall(r"^\s+(\w+) = AP\.(\w+)\(tbl, ([^)]+)\)$", src, flags=re.M)
    assert len(reads) == len(CD.CYCLE_ARRAYS)
    declared = {a.name: a.kind for a in CD.CYCLE_ARRAYS}
    for local, kind, index in reads:
        assert index == f"HIL.{local}", (local, index)       # by name, never a literal row
        assert declared[local] == kind, (local, kind, declared[local])
    assert {r[0] for r in reads} == set(declared)


def test_two_arrays_swapped_in_the_declaration_are_refused():
    pairs = [(a, b) for a, b in itertools.combinations(CD.CYCLE_ARRAYS, 2) if a.kind == b.kind]
    assert len(pairs) > 500
    for a, b in pairs:
        swapped = tuple(replace(x, source=b.source) if x is a else replace(x, source=a.source) if x is b else x
                        for x in CD.CYCLE_ARRAYS)
        with pytest.raises(ValueError, match="declared with another's source"):
            CD.check_declaration(swapped)
    CD.check_declaration()      # the shipped one loads


def test_a_packing_with_an_array_of_another_shape_is_refused(tmp_path):
    from sim_stand.kinematic_rig import Rig
    rig = Rig(tmp_path / "logs")
    try:
        rig.arm_and_start()
        c = rig.ctl
        arrays = list(CS.cycle_arrays(c))
        CS.pack_cycle(c, arrays=tuple(arrays))                     # as declared: packs
        i, j = CD.HIL.ins, CD.HIL.row                               # both float64 vectors, other lengths
        arrays[i], arrays[j] = arrays[j], arrays[i]
        with pytest.raises(ValueError, match="cycle array 'ins'.*shape"):
            CS.pack_cycle(c, arrays=tuple(arrays))
    finally:
        rig.close()


def test_the_compiled_checks_return_reasons_by_name():
    """rt.stand.safety.check and the controller's supervise name every reason they return
    (``R_*`` of rt.stand.safety, one per Reason), never a bare number (issue 39)."""
    from rt.stand import safety as SF
    for fn in (SF.check, CK.supervise):
        src = inspect.getsource(fn.py_func)
        bare = re.findall(r"return\s+([1-9]\d*)\b", src)
        assert not bare, (fn.py_func.__name__, bare)
        assert not re.findall(r"lim\[\d+", src), fn.py_func.__name__          # limits by their L_* index names
    for r in SF.Reason:
        if hasattr(SF, f"R_{r.name}"):
            assert getattr(SF, f"R_{r.name}") == int(r)


def test_every_reason_has_its_sentence():
    """describe() says every Reason in words (a trip's text must never fail to be made)."""
    import numpy as np

    from rt.stand import safety as SF
    detail = np.zeros(2)
    for r in SF.Reason:
        if r is SF.Reason.SENSOR_STATUS:
            detail[1] = 1.0
        assert isinstance(SF.describe(int(r), detail), str) and SF.describe(int(r), detail)
