// Ending the browser session (POST /accounts/logout, the session's own route).
import { csrfToken } from './client.js'

export async function logout(): Promise<void> {
  await fetch('/accounts/logout', { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRFToken': csrfToken() } }).catch(() => undefined)
  window.location.assign('/login')
}
