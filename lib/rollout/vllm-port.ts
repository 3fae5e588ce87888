/**
 * The port a vLLM server started beside the harness listens on: the checkpoint's `serving.port` (the registry), the
 * shard spec's `vllm.port` (what plan-shards writes), and the rollout job's fallback when a spec has none.
 * Unprivileged ports only: the job does not run as root on the host network.
 */
import { z } from 'zod';

export const DEFAULT_VLLM_PORT = 8000;

export const VllmPortSchema = z.number().int().min(1024).max(65535);
