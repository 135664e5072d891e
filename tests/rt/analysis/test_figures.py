"""The report's figures: event labels that stay readable where events crowd."""
from __future__ import annotations

from rt.analysis.figures import LABEL_CHARS, event_groups, place_labels


def test_events_close_in_time_share_one_label_and_repeats_are_counted():
    ev = [(2.50, "latch_closed"), (1.0, "first_contact"), (2.51, "latch_closed"), (2.52, "capture"),
          (2.53, "latch_closed"), (6.0, "capture_settled")]
    assert event_groups(ev, 0.05) == [(1.0, "first_contact"), (2.50, "latch_closed ×3, capture"),
                                      (6.0, "capture_settled")]
    # a chain of events each close to the one before is one group, however long the chain
    chain = [(1.0 + 0.04 * i, "sensor_triggered") for i in range(10)]
    assert event_groups(chain, 0.05) == [(1.0, "sensor_triggered ×10")]
    assert event_groups(chain, 0.01) == [(t, "sensor_triggered") for t, _ in chain]


def test_a_crowded_group_is_shortened_to_its_first_event():
    names = ["latch_deflected", "sensor_triggered", "latch_closed", "capture", "guide_contact"]
    (t, text), = event_groups([(3.0 + 0.001 * i, n) for i, n in enumerate(names)], 0.01)
    assert t == 3.0 and text == "latch_deflected +4 more" and len(text) <= LABEL_CHARS
    assert event_groups([], 0.01) == []


def test_event_labels_never_overlap_in_a_row():
    """Horizontal labels over a 10 s axis 10 inches wide: a crowded second needs more rows, and
    no two labels of one row overlap (their estimated extents, the same estimate as placed)."""
    groups = [(t, f"event number {i}") for i, t in enumerate([0.0, 1.74, 1.9, 2.26, 2.46, 2.54, 2.66, 4.54, 9.99])]
    placed = place_labels(groups, 0.0, 10.0, 10.0)
    assert max(p[2] for p in placed) >= 2
    per_char = 0.55 * 7.5 / 72.0 / 10.0 * 10.0
    for row in {p[2] for p in placed}:
        spans = sorted((t, t + (len(x) + 1) * per_char) if ha == "left" else (t - (len(x) + 1) * per_char, t)
                       for t, x, r, ha in placed if r == row)
        assert all(a1 >= b0 for (_, b0), (a1, _) in zip(spans, spans[1:]))
        assert all(0.0 <= a and b <= 10.0 + 1e-9 for a, b in spans)        # nothing runs off the axis
