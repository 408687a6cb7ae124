"""Only the optional C record decoder; everything else is in pyproject.toml.

``optional=True``: where no C compiler or Python headers exist (a slim image), the build goes on
without it and monitor.kafka.record uses its pure-Python loop."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("monitor.kafka.record._decode", ["monitor/kafka/record/_decode.c"], optional=True,
                             extra_compile_args=["-O2"])])
