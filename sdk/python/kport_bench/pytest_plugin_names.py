"""The range name of kport_bench.pytest_plugin, importable without pytest
(include/kport/nvtx_convention.hpp's test_prefix; a unit test pins both)."""

TEST_PREFIX = "kport.test:"
