"""Wire formats and transports: frame codecs, serial / zmq / udp / memory transports with one
non-blocking interface, and the F/T sensor and motion-platform drivers."""
