#pragma once
// MPI's C API, for every file of the sweep that calls MPI: only the C API is used, so the
// deprecated C++ bindings (which do not compile warning-free) are skipped, for Open MPI and MPICH.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
