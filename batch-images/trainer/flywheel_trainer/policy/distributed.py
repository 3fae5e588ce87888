"""Multi-process training: FSDP2 (``torch.distributed.fsdp.fully_shard``) under torchrun, one node or an AWS Batch
multi-node parallel job.

Under torchrun every rank runs the same job; ``init_from_env`` joins the process group (NCCL on GPUs, gloo on CPU),
``shard_model`` shards each decoder layer and then the whole model over all ranks, and rank 0 alone writes blobs
(metrics, state, checkpoint) from full state dicts gathered collectively. FSDP2 runs on CPU with gloo in torch 2.13
(the test runs two CPU ranks), so there is no DDP fallback.

    >>> command = torchrun_command(nproc_per_node=8, env=os.environ)   # the job relaunches itself under torchrun
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping

import torch
import torch.distributed as dist

from .train import World

DEFAULT_PORT = 29500


def under_torchrun(env: Mapping[str, str] | None = None) -> bool:
    """True in a rank torchrun started (it sets ``LOCAL_RANK`` and ``WORLD_SIZE``)."""
    env = os.environ if env is None else env
    return "LOCAL_RANK" in env and "WORLD_SIZE" in env


def init_from_env() -> tuple[World, torch.device]:
    """Joins torchrun's process group (when under torchrun) and returns this rank's world and device.

    @example world, device = init_from_env()
    """
    cuda = torch.cuda.is_available()
    if not under_torchrun() or int(os.environ["WORLD_SIZE"]) == 1:
        return World(), torch.device("cuda" if cuda else "cpu")
    local = int(os.environ["LOCAL_RANK"])
    if cuda:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if cuda else "gloo")
    return World(rank=dist.get_rank(), size=dist.get_world_size()), torch.device(f"cuda:{local}" if cuda else "cpu")


def shard_model(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """FSDP2: each decoder layer its own unit (all-gathered one at a time), then the root (embeddings, head).

    @example model = shard_model(model, device)   # inside a torchrun rank, after init_from_env()
    """
    from torch.distributed.device_mesh import init_device_mesh

    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # torch < 2.6: FSDP2's earlier home
        from torch.distributed._composable.fsdp import fully_shard

    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    # The decoder layers of an HF causal LM (peft-wrapped or not).
    layers = [m for m in model.modules() if type(m).__name__.endswith("DecoderLayer")]
    for layer in layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def full_model_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The whole model's state dict on CPU (collective: every rank calls it; rank 0 uses it)."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def barrier(world: World) -> None:
    if world.distributed:
        dist.barrier()


def shutdown(world: World) -> None:
    if world.distributed and dist.is_initialized():
        dist.destroy_process_group()


def torchrun_command(nproc_per_node: int, env: Mapping[str, str], nodes: int = 1, args: list[str] | None = None) -> list[str]:
    """torchrun's command line for this job: one node, or the node of an AWS Batch multi-node parallel job whose
    index, node count and main node's address Batch sets (``AWS_BATCH_JOB_NODE_INDEX``, ``AWS_BATCH_JOB_NUM_NODES``,
    ``AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS``, the last absent on the main node itself).

    @example subprocess.run(torchrun_command(8, os.environ, nodes=2), check=True)
    """
    num_nodes = int(env.get("AWS_BATCH_JOB_NUM_NODES", nodes))
    node_rank = int(env.get("AWS_BATCH_JOB_NODE_INDEX", 0))
    main = env.get("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS")
    if not main:
        # The main node (or one node): its own address, which the other nodes reach it by.
        main = "127.0.0.1" if num_nodes == 1 else socket.gethostbyname(socket.gethostname())
    port = str(env.get("FLYWHEEL_RDZV_PORT", DEFAULT_PORT))
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes", str(num_nodes), "--node_rank", str(node_rank), "--nproc_per_node", str(nproc_per_node),
        "--master_addr", main, "--master_port", port,
        "-m", "flywheel_trainer", *(args or ["policy-job"]),
    ]
