/**
 * The one price table of compute: what an hour of a GPU or of a vCPU costs on AWS Batch (Batch itself is free; the
 * EC2 instances are not). The sweep cost model (`lib/sweeps/estimate-sweep-cost.ts`, `DEFAULT_PRICES`) and the usage
 * accounting (`lib/compute/usage/`) both read it, so a sweep's estimate and its accounted spend agree.
 *
 * us-east-1 on-demand list prices: check them against the AWS price list of the region in use (docs/cost-model.md).
 *
 * - GPU pool: one rollout child per instance (`gpus: 1`), on the smallest size of the stages' GPU families (g6, g6e)
 *   that holds it: g6.2xlarge, 8 vCPU, 32 GiB, one L4, $0.9776 per hour. A job asking for n GPUs costs n of them.
 * - CPU pool: c7i (the stages' CPU family), priced per vCPU: c7i.large, 2 vCPU, $0.08925 per hour.
 *
 * @example
 * const usd = hours * gpus * COMPUTE_PRICES.gpuHourUsd;
 */
export interface ComputePrices {
  /** The GPU instance one GPU of a job stands for. */
  gpuInstanceType: string;
  /** USD per hour of that instance (its GPU, vCPUs and memory together). */
  gpuInstanceHourUsd: number;
  gpusPerGpuInstance: number;
  /** USD per GPU-hour: the instance's hour over its GPUs. */
  gpuHourUsd: number;
  /** The CPU instance a CPU job's vCPUs are priced on. */
  cpuInstanceType: string;
  cpuInstanceHourUsd: number;
  vcpusPerCpuInstance: number;
  /** USD per vCPU-hour of a CPU-pool job. */
  vcpuHourUsd: number;
}

export const COMPUTE_PRICES: ComputePrices = {
  gpuInstanceType: 'g6.2xlarge',
  gpuInstanceHourUsd: 0.9776,
  gpusPerGpuInstance: 1,
  gpuHourUsd: 0.9776,
  cpuInstanceType: 'c7i.large',
  cpuInstanceHourUsd: 0.08925,
  vcpusPerCpuInstance: 2,
  vcpuHourUsd: 0.08925 / 2,
};
