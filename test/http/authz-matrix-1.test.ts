// Shard 1 of 8 of the authorization matrix (authz-matrix.ts).
import { runAuthorizationMatrix } from './authz-matrix.js'

runAuthorizationMatrix(0, 8)
