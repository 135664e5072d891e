"""ABB's egm.proto (as published in ros-industrial/abb_libegm) and its protoc-generated module."""
