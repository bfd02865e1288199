/** A lossy failover of the Redis Cluster master holding a seller's queue shard (cluster-failover-case.ts). */
import { describeClusterFailover } from './cluster-failover-case.js';

describeClusterFailover('seller');
