// A clock in seconds that ticks once a minute, shared by every message row
// (which re-checks whether its edit and delete limits have passed). One timer
// runs while any view reads it.
import { readable } from 'svelte/store'

const nowSeconds = () => Date.now() / 1000

export const minuteClock = readable(nowSeconds(), (set) => {
  set(nowSeconds())
  const timer = setInterval(() => set(nowSeconds()), 60_000)
  return () => clearInterval(timer)
})

export { nowSeconds }
