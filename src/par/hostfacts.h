/* hostfacts: the facts a run records beside sysinfo's and `check` judges: CPU governor and frequency
 * range, board or instance model, the network interface that carries traffic to rank 0 (its kind, link
 * speed, MTU), and the build and library versions. Reads /sys and /proc (/proc/net/route) through
 * sysfs (a fake tree under WB_SYSFS_ROOT in the fault build), and getifaddrs. */
#ifndef WB_HOSTFACTS_H
#define WB_HOSTFACTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/sysinfo.h"

#define WB_HOSTFACTS_MAX_ADDRS 8

/* This host's IPv4 addresses (network order) on interfaces that are up, loopback left out, into
 * addrs[cap]; returns how many. Local. */
int wb_hostfacts_local_addrs(uint32_t *addrs, int cap);

/* Interfaces that are up with an IPv4 address, loopback left out: the ones Open MPI's TCP transport
 * may pick from. Local. */
int wb_hostfacts_candidates(void);

/* Fill h's governor, frequency range, model, versions (fftw and hdf5 given by the modules that own
 * them) and the interface that routes to one of rank 0's addresses root[n] (the most specific route
 * wins; an address of this host gives "lo"). Local, never fails: unknown facts stay "" or -1/NaN. */
void wb_hostfacts_read(struct wb_host *h, const uint32_t *root, int n, const char *fftw, const char *hdf5);

/* The interface of the most specific up route in route_file (the format of /proc/net/route) that
 * covers one of root[n], lowest metric on a tie, into iface[cap]; "" if none. Local. */
void wb_hostfacts_route(const char *route_file, const uint32_t *root, int n, char *iface, size_t cap);

/* Rank 0's addresses (wb_hostfacts_local_addrs there) into addrs[WB_HOSTFACTS_MAX_ADDRS] and their
 * count into *n on every rank (0 if the broadcast failed). Collective. 0 or WB_EMPI. */
int wb_hostfacts_root_addrs(uint32_t *addrs, int *n);

/* This node's memcpy bandwidth (core/ceiling.h), measured once, by the node's first rank only (NaN on
 * the others), and kept: a run measures it before its file exists, so the copy never lands inside a
 * window another rank times. Local. */
double wb_hostfacts_copy_Bps(void);

/* Rank 0's addresses broadcast, then wb_hostfacts_read and the copy bandwidth. Collective. 0 or WB_EMPI. */
int wb_hostfacts_fill(struct wb_host *h, const char *fftw, const char *hdf5);

#endif
