// Shard 3 of 8 of the authorization matrix (authz-matrix.ts).
import { runAuthorizationMatrix } from './authz-matrix.js'

runAuthorizationMatrix(2, 8)
