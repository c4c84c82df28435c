// Typed calls to the API under /json with the session cookie: every unsafe
// method carries X-CSRFToken (the csrftoken cookie). A 401 (or a CSRF refusal) means the session
// ended: the app goes to /login (onSessionEnded). The API key is never used.

export const API_BASE = '/json'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    msg: string,
    readonly body: Record<string, unknown>,
  ) {
    super(msg)
  }
}

export type Params = Record<string, string | number | boolean | readonly unknown[] | Record<string, unknown> | undefined | null>

/** To the login page, which brings the browser back to the view it was on (the draft there is kept by lib/drafts.ts). */
let sessionEnded: () => void = () => window.location.assign(`/login?next=${encodeURIComponent(`/${window.location.hash}`)}`)
export function onSessionEnded(handler: () => void): void {
  sessionEnded = handler
}

/**
 * Whether an answer means the browser has no session: 401, or a CSRF refusal
 * (a browser without a session has no CSRF token either, and routes open to
 * logged-out visitors, such as register, answer that first).
 */
export function sessionGone(status: number, code: unknown): boolean {
  return status === 401 || (status === 403 && code === 'CSRF_FAILED')
}

export function csrfToken(): string {
  const match = /(?:^|;\s*)csrftoken=([^;]+)/.exec(document.cookie)
  return match ? decodeURIComponent(match[1]!) : ''
}

/** Booleans and numbers as strings, arrays and objects JSON-encoded (the API's wire convention). */
export function encode(params: Params): URLSearchParams {
  const out = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue
    out.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v))
  }
  return out
}

export interface CallOptions { signal?: AbortSignal; body?: FormData }

export async function call<T = Record<string, unknown>>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, params: Params = {}, options: CallOptions = {}): Promise<T> {
  const encoded = encode(params)
  const inQuery = method === 'GET' || options.body !== undefined
  const url = `${API_BASE}${path}${inQuery && [...encoded].length > 0 ? `?${encoded}` : ''}`
  const headers: Record<string, string> = { Accept: 'application/json' }
  if (method !== 'GET') headers['X-CSRFToken'] = csrfToken()
  const res = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    body: options.body ?? (inQuery ? undefined : encoded),
    signal: options.signal,
  })
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>
  if (sessionGone(res.status, body.code)) sessionEnded()
  if (!res.ok || body.result !== 'success') {
    throw new ApiError(res.status, String(body.code ?? 'NETWORK'), String(body.msg ?? res.statusText), body)
  }
  return body as T
}

/** Uploads a file with progress (fetch reports none for request bodies). */
export function upload(file: File, onProgress: (fraction: number) => void): Promise<{ url: string; filename: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', `${API_BASE}/user_uploads`)
    xhr.setRequestHeader('X-CSRFToken', csrfToken())
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total)
    xhr.onload = () => {
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(xhr.responseText) as Record<string, unknown>
      } catch {
        /* not JSON: reported below */
      }
      if (sessionGone(xhr.status, body.code)) sessionEnded()
      if (xhr.status >= 200 && xhr.status < 300 && body.result === 'success') resolve({ url: String(body.url), filename: String(body.filename ?? file.name) })
      else reject(new ApiError(xhr.status, String(body.code ?? 'NETWORK'), String(body.msg ?? xhr.statusText), body))
    }
    xhr.onerror = () => reject(new ApiError(0, 'NETWORK', 'network error', {}))
    const form = new FormData()
    form.append('file', file, file.name)
    xhr.send(form)
  })
}
