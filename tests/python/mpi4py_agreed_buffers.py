"""mpi4py's buffer collectives leave their result in a buffer, not in the
call's value: after `comm.Allreduce(sendbuf, recvbuf)` (or `MPI.IN_PLACE`)
and `comm.Bcast(buf)`, every rank holds the same buffer.  A helper that
returns such a buffer, or another helper's (spinningup's `mpi_avg` ->
`mpi_sum` -> `mpi_op`, through `def allreduce(*args, **kwargs)`), returns
an agreed value: a loop leaves on it together.
"""
import numpy as np
from mpi4py import MPI


def allreduce(*args, **kwargs):
    return MPI.COMM_WORLD.Allreduce(*args, **kwargs)


def num_procs():
    """Count active MPI processes."""
    return MPI.COMM_WORLD.Get_size()


def mpi_op(x, op):
    x, scalar = ([x], True) if np.isscalar(x) else (x, False)
    x = np.asarray(x, dtype=np.float32)
    buff = np.zeros_like(x, dtype=np.float32)
    allreduce(x, buff, op=op)
    return buff[0] if scalar else buff


def mpi_sum(x):
    return mpi_op(x, MPI.SUM)


def mpi_avg(x):
    """Average a scalar or vector over MPI processes."""
    return mpi_sum(x) / num_procs()


def line_search(evaluate, pi_loss, iters):
    # Hard negative: both sides of the test are averages over the ranks.
    pi_l_old = mpi_avg(evaluate(pi_loss, 0))
    for j in range(iters):
        pi_l_new = mpi_avg(evaluate(pi_loss, j))
        if pi_l_new <= pi_l_old:
            break
        MPI.COMM_WORLD.Barrier()


def in_place(evaluate, loss, iters):
    for j in range(iters):
        x = np.asarray(evaluate(loss, j))
        # Hard negative: reduced in place.
        MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, x, op=MPI.SUM)
        if x[0] <= 0:
            break
        MPI.COMM_WORLD.Barrier()


def broadcast_decision(evaluate, loss, iters):
    comm = MPI.COMM_WORLD
    for j in range(iters):
        stop = np.asarray([evaluate(loss, j) <= 0])
        # Hard negative: rank 0's decision, handed to every rank.
        comm.Bcast(stop, root=0)
        if stop[0]:
            break
        comm.Barrier()


def own_loss(evaluate, loss, iters):
    for j in range(iters):
        x = np.asarray(evaluate(loss, j))
        buff = np.zeros_like(x)
        MPI.COMM_WORLD.Allreduce(x, buff, op=MPI.SUM)
        if x[0] <= 0:
            break
        MPI.COMM_WORLD.Barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'mpi4py.MPI.COMM_WORLD.Barrier' is skipped by ranks where 'x[0] <= 0' holds (a rank-local value){{.*}} [ddp-divergent-collective]
