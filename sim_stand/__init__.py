"""Stand emulator and all-digital simulation (mechanism, contact, emulated devices)."""
import rt as _rt  # noqa: F401  (sets the numba cache location before any kernel compiles)
