// Times and dates of messages, in the user's 24-hour setting.
export function formatTime(timestamp: number, twentyFour: boolean): string {
  return new Date(timestamp * 1000).toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit', hour12: !twentyFour })
}

export function formatDate(timestamp: number): string {
  return new Date(timestamp * 1000).toLocaleDateString(undefined, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' })
}

export function sameDay(a: number, b: number): boolean {
  return new Date(a * 1000).toDateString() === new Date(b * 1000).toDateString()
}
