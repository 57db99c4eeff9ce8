"""A saved checkpoint's weights as the test scripts read them: one file or shards, since a save keeps
the shard size of the checkpoint it started from (the fixtures are sharded)."""
import pathlib

from safetensors.numpy import load_file


def checkpoint_tensors(model_dir):
    """Every tensor of model_dir's safetensors files, by name."""
    tensors = {}
    for f in sorted(pathlib.Path(model_dir).glob("*.safetensors")):
        tensors.update(load_file(f))
    return tensors


def checkpoint_bytes(model_dir):
    """The bytes of model_dir's safetensors files, by file name: equal exactly when two saves are."""
    return {f.name: f.read_bytes() for f in sorted(pathlib.Path(model_dir).glob("*.safetensors"))}
