// Focus for dialogs: keep Tab and Shift+Tab within an open modal dialog
// (aria-modal), and give focus back to what had it when the dialog closes.

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])'

function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null || el === document.activeElement)
}

/** Focuses the dialog and, for a modal one, wraps Tab at its ends; returns the undo, which focuses the element that had focus before (when it is still in the page). */
export function holdFocus(dialog: HTMLElement, options: { modal: boolean }): () => void {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
  dialog.focus()
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'Tab') return
    const items = focusables(dialog)
    const first = items[0]
    const last = items[items.length - 1]
    if (!first || !last) return e.preventDefault()
    const active = document.activeElement
    if (e.shiftKey && (active === first || active === dialog || !dialog.contains(active))) {
      e.preventDefault()
      last.focus()
    } else if (!e.shiftKey && (active === last || !dialog.contains(active))) {
      e.preventDefault()
      first.focus()
    }
  }
  // Focus that leaves a modal dialog some other way (a click on the page behind) comes back to it.
  const onFocusIn = (e: FocusEvent) => {
    if (e.target instanceof Node && !dialog.contains(e.target)) dialog.focus()
  }
  if (options.modal) {
    document.addEventListener('keydown', onKey, true)
    document.addEventListener('focusin', onFocusIn)
  }
  return () => {
    document.removeEventListener('keydown', onKey, true)
    document.removeEventListener('focusin', onFocusIn)
    if (opener?.isConnected) opener.focus()
  }
}
