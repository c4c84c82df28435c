// Times and dates of messages, in the user's 24-hour setting. The formatters
// are made once: building an Intl.DateTimeFormat costs far more than using
// one, and every message row formats its time.
const timeFormats = new Map<boolean, Intl.DateTimeFormat>()
let dateFormat: Intl.DateTimeFormat | undefined

export function formatTime(timestamp: number, twentyFour: boolean): string {
  let format = timeFormats.get(twentyFour)
  if (!format) {
    format = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', hour12: !twentyFour })
    timeFormats.set(twentyFour, format)
  }
  return format.format(timestamp * 1000)
}

export function formatDate(timestamp: number): string {
  dateFormat ??= new Intl.DateTimeFormat(undefined, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' })
  return dateFormat.format(timestamp * 1000)
}

export function sameDay(a: number, b: number): boolean {
  const x = new Date(a * 1000)
  const y = new Date(b * 1000)
  return x.getDate() === y.getDate() && x.getMonth() === y.getMonth() && x.getFullYear() === y.getFullYear()
}
