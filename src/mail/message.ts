// An outgoing mail: plain text, optionally an HTML alternative and extra
// headers (List-Unsubscribe, Reply-To…). nodemailer builds its RFC 5322 form.
export interface OutgoingMail {
  /** An address, or `"Name" <address>`. */
  from: string
  to: string
  subject: string
  text: string
  html?: string
  replyTo?: string
  headers?: Record<string, string>
}
