/* MPI_THREAD_MULTIPLE, one interleaving made on purpose (VTRACE_TEST_POST_HOOK=1): a
 * thread's MPI_Wait has returned (MPI freed its request's handle) but the layer has not
 * recorded it yet, when another thread's MPI_Irecv gets the same handle back (MPICH
 * reuses handles last freed first) and that thread waits for it. Each thread must be
 * given its own request's completion. The threads receive on different communicators
 * (MPI_COMM_SELF and a duplicate of it), so a completion given to the other thread's
 * request leaves a message unmatched in the trace. ROUNDS rounds; every rank alone. */
#include "mpitest.h"

#include <pthread.h>

enum { ROUNDS = 20 };

static MPI_Comm dup_self;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase;          /* 1: first thread holds its Wait; 2: second thread done */
static int round_no;       /* rounds the second thread has started */
static __thread int holds; /* this thread's Wait is to be held in the hook */
static MPI_Request freed;  /* the handle the first thread's Wait freed */
static int reused;         /* rounds where the second thread got it back */

/* Called by the layer after a completion call returned, before it records it. */
void vtrace_test_post_hook(void);
void vtrace_test_post_hook(void)
{
    if (!holds)
        return;
    holds = 0;
    pthread_mutex_lock(&mu);
    phase = 1;
    pthread_cond_broadcast(&cv);
    while (phase != 2)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void exchange(MPI_Comm comm, int tag, int value, MPI_Request *rq)
{
    int out = value, in = -1;
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, 0, tag, comm, rq));
    MPI_Request got = *rq;
    CHECK_MPI(MPI_Send(&out, 1, MPI_INT, 0, tag, comm));
    if (tag == 1) {
        freed = got;
        holds = 1;
    }
    CHECK_MPI(MPI_Wait(rq, &st));
    CHECK_STATUS(st, 0, tag, 1, MPI_INT);
    CHECK(in == value, "tag %d: received %d, expected %d", tag, in, value);
}

static void *first(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Request rq;
        exchange(MPI_COMM_SELF, 1, 1000 + i, &rq);
    }
    return NULL;
}

static void *second(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&mu);
        while (phase != 1)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        MPI_Request rq;
        int in = -1, out = 2000 + i;
        MPI_Status st;
        CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, 0, 2, dup_self, &rq));
        reused += rq == freed;
        CHECK_MPI(MPI_Send(&out, 1, MPI_INT, 0, 2, dup_self));
        CHECK_MPI(MPI_Wait(&rq, &st));
        CHECK_STATUS(st, 0, 2, 1, MPI_INT);
        CHECK(in == out, "tag 2: received %d, expected %d", in, out);
        pthread_mutex_lock(&mu);
        phase = 2;
        round_no++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "threads_reuse needs MPI_THREAD_MULTIPLE (got %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 77);
    }
    const char *hook = getenv("VTRACE_TEST_POST_HOOK");
    if (!hook || strcmp(hook, "1")) {
        fprintf(stderr, "threads_reuse needs VTRACE_TEST_POST_HOOK=1\n");
        MPI_Abort(MPI_COMM_WORLD, 77);
    }
    MPI_Comm_dup(MPI_COMM_SELF, &dup_self);
    pthread_t th[2];
    pthread_create(&th[0], NULL, first, NULL);
    pthread_create(&th[1], NULL, second, NULL);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    /* the interleaving this test is about: MPICH gave the handle back at once */
    CHECK(round_no == ROUNDS && reused == ROUNDS, "%d of %d rounds, the freed handle reused in %d", round_no, ROUNDS,
          reused);
    MPI_Comm_free(&dup_self);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return mt_result();
}
