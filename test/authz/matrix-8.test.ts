// Shard 8 of 8 of the authorization matrix (matrix.ts).
import { runAuthorizationMatrix } from './matrix.js'

runAuthorizationMatrix(7, 8)
