// The part of autocannon (which ships no types) that the benchmarks use.
declare module 'autocannon' {
  export interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    headers?: Record<string, string>
    method?: string
  }
  export interface Histogram {
    average: number
    mean: number
    p50: number
    p90: number
    p99: number
    max: number
    total: number
  }
  export interface Result {
    requests: Histogram
    latency: Histogram
    throughput: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    duration: number
  }
  export default function autocannon(options: Options): Promise<Result>
}
