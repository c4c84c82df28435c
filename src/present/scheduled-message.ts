// The wire form of a scheduled message (GET /scheduled_messages, register and its events).
export interface ScheduledMessageDict {
  scheduled_message_id: number
  type: 'stream' | 'private'
  to: number | number[]
  topic?: string
  content: string
  rendered_content: string
  scheduled_delivery_timestamp: number
  failed: boolean
}
