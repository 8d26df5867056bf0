/* fft_mpi_exchange: the time FFTW-MPI's transposes spend in MPI, apart from their local reordering.
 *
 * A transpose of FFTW-MPI packs its blocks, exchanges them (MPI_Sendrecv pair by pair, or
 * MPI_Alltoall/MPI_Alltoallv, whichever its planner picked) and unpacks them. It gives no
 * hook between those steps, so the exchange is timed through MPI's profiling interface: this file
 * defines the three calls, and the program's definitions take the place of the MPI library's for
 * every caller, FFTW-MPI's shared library included. While no transpose is being timed a call goes
 * straight to its PMPI_ twin after one test of a flag. */
#include "fftw/fft_mpi.h"

#ifndef WB_NO_FFTW_MPI

#include "core/timer.h"

static struct {
    int armed;
    double seconds;
    int64_t bytes;
} ex;

void wb_fftmpi_exchange_arm(int on) { ex.armed = on; }

void wb_fftmpi_exchange_take(double *seconds, int64_t *bytes)
{
    *seconds = ex.seconds;
    *bytes = ex.bytes;
    ex.seconds = 0;
    ex.bytes = 0;
}

static int64_t type_bytes(MPI_Datatype t, int64_t count)
{
    int size = 0;
    PMPI_Type_size(t, &size);
    return count * size;
}

static int my_rank(MPI_Comm comm)
{
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    return me;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    if (!ex.armed)
        return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
    double t0 = wb_timer_now_s();
    int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
    ex.seconds += wb_timer_now_s() - t0;
    if (dest != MPI_PROC_NULL && dest != my_rank(comm))
        ex.bytes += type_bytes(stype, scount);
    return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm)
{
    if (!ex.armed)
        return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    double t0 = wb_timer_now_s();
    int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    ex.seconds += wb_timer_now_s() - t0;
    int n = 1;
    PMPI_Comm_size(comm, &n);
    ex.bytes += type_bytes(stype, (int64_t)scount * (n - 1));
    return rc;
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    if (!ex.armed)
        return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    double t0 = wb_timer_now_s();
    int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    ex.seconds += wb_timer_now_s() - t0;
    int n = 1, me = my_rank(comm);
    PMPI_Comm_size(comm, &n);
    int64_t sent = 0;
    for (int q = 0; q < n; q++)
        sent += q == me ? 0 : scounts[q];
    ex.bytes += type_bytes(stype, sent);
    return rc;
}

#endif
