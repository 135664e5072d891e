"""RDT's ft_sequence is the Net F/T's internal sample counter (ATI Net F/T manual, RDT record
"ft_sequence: the internal sample number of the F/T record", incremented at the 7000 Hz
internal rate whatever the RDT output rate): the emulated device advances it by internal /
output per record, and the host converts it with the internal rate, so device time advances
by one output period per record at any output rate (issue 26 item 2)."""
from __future__ import annotations

import time

import numpy as np
import pytest

from drivers.ft_sensor import FtSensor, RdtDevice, decode_rdt_records
from drivers.transport import open_transport
from rt.config._schema import ConfigError
from rt.config.stand import load_stand
from rt.control.links import wait_readable

from tests.rt.config.test_stand_config import DEFAULT as STAND


@pytest.mark.parametrize("output_hz, step", [(7000.0, 1), (1000.0, 7), (500.0, 14)])
def test_ft_sequence_counts_internal_samples(output_hz, step):
    dev = RdtDevice(open_transport("udp", local_host="127.0.0.1", local_port=0), records_per_packet=1,
                    internal_rate_hz=7000.0, output_rate_hz=output_hz)
    host = open_transport("udp", host="127.0.0.1", port=dev.transport.local_address[1], framing="raw")
    sensor = FtSensor(host, "rdt", ft_rate_hz=7000.0)
    try:
        sensor.open()
        t_end = time.monotonic() + 5.0
        while not dev.streaming and time.monotonic() < t_end:
            dev.poll()
            time.sleep(1e-3)
        assert dev.streaming
        got = []
        for k in range(20):
            assert dev.publish([k, 0, 0, 0, 0, 0]) == 1
            assert wait_readable(host, time.monotonic() + 2.0)
            got += sensor.poll()
        seq = np.array([dev_s.device_time for dev_s in got])
        assert len(got) == 20
        # device time = ft_sequence / 7000: one output period per record
        np.testing.assert_allclose(np.diff(seq), 1.0 / output_hz, rtol=0, atol=1e-12)
        assert dev.ft_sequence == 20 * step
    finally:
        sensor.close()
        dev.transport.close()


def test_record_carries_the_internal_count():
    dev = RdtDevice(open_transport("udp", local_host="127.0.0.1", local_port=0), records_per_packet=1,
                    internal_rate_hz=7000.0, output_rate_hz=1000.0)
    try:
        dev.mode, dev.remaining = 0x0002, -1               # streaming (as after a start request)
        sent = []
        dev.transport.send = lambda data: sent.append(data) or True
        for _ in range(3):
            dev.publish([1, 2, 3, 4, 5, 6])
        recs = [decode_rdt_records(d)[0] for d in sent]
        assert [r.rdt_sequence for r in recs] == [1, 2, 3]
        assert [r.ft_sequence for r in recs] == [7, 14, 21]
    finally:
        dev.transport.close()


def test_stand_internal_rate_default_and_bad_value(tmp_path):
    stand = load_stand(STAND)
    assert stand.sensor_internal_rate_hz == 7000.0
    text = STAND.read_text().replace("internal_rate_hz = 7000 ", "internal_rate_hz = 500 ")
    assert "internal_rate_hz = 500" in text
    bad = tmp_path / "stand.toml"
    bad.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_stand(bad)
    msg = str(e.value)
    assert str(bad) in msg and "sensor.internal_rate_hz" in msg and "cannot be below" in msg
