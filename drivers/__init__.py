"""Wire formats and transports: frame codecs, serial / zmq / udp / memory transports with one
non-blocking interface, and the F/T sensor and motion-platform drivers (docs/protocols.md).

    from drivers import open_transport, FtSensor, MotionPlatform
"""
from drivers.framing import Counters, FrameType, SeqTracker, StreamDecoder, check_frame, encode_frame
from drivers.ft_sensor import (FtSample, FtSensor, RdtCommand, RdtDevice, SerialSensorDevice,
                               decode_rdt_records, decode_rdt_request, decode_sensor_frame,
                               encode_rdt_records, encode_rdt_request, encode_sensor_frame)
from drivers.motion_platform import (Command, FaultCode, Mode, MotionPlatform, MotionPlatformDevice,
                                     PlatformCommand, PlatformState, PlatformStatus, decode_command,
                                     decode_status, encode_command, encode_status)
from drivers.transport import (Transport, TransportConfigError, TransportError, make_transport,
                               memory_pair, open_transport, validate_options)

__all__ = [
    "Counters", "FrameType", "SeqTracker", "StreamDecoder", "check_frame", "encode_frame",
    "FtSample", "FtSensor", "RdtCommand", "RdtDevice", "SerialSensorDevice", "decode_rdt_records",
    "decode_rdt_request", "decode_sensor_frame", "encode_rdt_records", "encode_rdt_request",
    "encode_sensor_frame", "Command", "FaultCode", "Mode", "MotionPlatform", "MotionPlatformDevice",
    "PlatformCommand", "PlatformState", "PlatformStatus", "decode_command", "decode_status",
    "encode_command", "encode_status", "Transport", "TransportConfigError", "TransportError",
    "make_transport", "memory_pair", "open_transport", "validate_options",
]
