"""Where a fit ran, said in words: one JAX CPU device per chain is not one processor per chain."""

from ddr_explorer.core.formatting import fmt_device


def test_cpu_devices_are_chains_sharing_the_cores():
    assert fmt_device("cpu x4", cores=2) == "CPU, 4 chains in parallel on 2 cores"
    assert fmt_device("cpu x4") == "CPU, 4 chains in parallel (one JAX device each)"
    assert fmt_device("cpu x1", cores=1) == "CPU, 1 chain"


def test_other_devices_are_left_as_they_are():
    assert fmt_device("gpu: NVIDIA H200") == "gpu: NVIDIA H200"
    assert fmt_device(None) == ""


def test_the_status_bar_words_are_short():
    """The status bar's label has room for about 40 characters: "4 chains in para...cores" read as nothing."""
    assert fmt_device("cpu x4", cores=2, short=True) == "CPU, 4 chains on 2 cores"
    assert fmt_device("cpu x4", short=True) == "CPU, 4 chains"
    assert fmt_device("cpu x1", cores=1, short=True) == "CPU, 1 chain"
