// The few parts of zulip-js (which ships no types) that the e2e tests use.
declare module 'zulip-js' {
  export interface ZulipConfig {
    realm: string
    username: string
    apiKey?: string
    password?: string
  }
  export interface ZulipResponse {
    result: 'success' | 'error'
    msg: string
    code?: string
    [field: string]: unknown
  }
  type Call = (params?: Record<string, unknown>) => Promise<ZulipResponse>
  export interface ZulipClient {
    config: ZulipConfig & { apiURL: string }
    callEndpoint(endpoint: string, method?: string, params?: Record<string, unknown>): Promise<ZulipResponse>
    users: { me: { getProfile: Call }; retrieve: Call }
    streams: { retrieve: Call; subscriptions: { retrieve: Call } }
    messages: { send: Call; retrieve: Call }
    queues: { register: Call }
    events: { retrieve: Call }
    server: { settings: Call }
  }
  export default function zulipInit(config: ZulipConfig): Promise<ZulipClient>
}
