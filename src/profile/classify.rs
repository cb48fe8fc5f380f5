//! Attribution of flame-graph width: each stack gets one category.
//!
//! The default rules are FORMATS.md §6 (HotSpot/JDK/glibc/kernel symbol
//! names, validated on the fixtures) plus CPython stdlib, Go runtime and
//! server-loop frames. Per stack, in this order:
//!
//! 1. thread anchors anywhere in the stack: JIT, then GC, then VM (a
//!    VM-thread operation that is not GC is safepoint work);
//! 2. otherwise the rule match nearest the leaf: an idle frame (waits for
//!    work by itself: `threading.Condition.wait`), safepoint (→ `vm`), a
//!    lock or I/O wait. A lock or I/O wait is `idle-wait` instead when the
//!    thread is waiting for work: the stack passes through an idle path
//!    (`rules.idle_wait`: a pool's `getTask`, a poller, Go's accept loop), or
//!    the wait is called directly by a server loop (`rules.idle_caller`:
//!    `serve_forever` → `select`, `handle_one_request` → the read of the
//!    next request on a kept-alive connection);
//! 3. otherwise application when a frame is business code (configured
//!    prefixes/patterns; without any, every remaining stack), else other.
//!
//! Idle stacks are left out of the busy shares that attribution compares
//! (`[profiles] exclude_idle`, on by default): a server that waits for
//! requests 85 % of the time would otherwise dilute every change.
//!
//! Frames are matched after removing an annotation suffix `_[j]`, `_[k]`, …
//! (FORMATS.md §5.1), and each distinct frame is matched once per
//! classifier: the same frames recur in every profile of an archive (680
//! profiles at 120 endpoints × 3 years), so their flags are memoised.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use regex_lite::Regex;
use serde::Serialize;

use super::normalise::Normalisation;
use super::{Profile, Stack};
use crate::config::ProfileSettings;
use crate::hash::FastMap;

/// What a stack's width is spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Business code (configured prefixes), or all remaining mutator work.
    Application,
    /// Garbage-collector threads and collections.
    Gc,
    /// JIT compiler threads.
    Jit,
    /// VM operations and safepoint synchronisation.
    Vm,
    /// Monitor enter, parking, mutexes.
    Lock,
    /// Socket and file reads/writes, polling.
    Io,
    /// Threads waiting for work: pool threads parked on an empty queue,
    /// server loops in `select`/`accept`, a kept-alive connection's wait
    /// for the next request. Left out of the busy shares.
    IdleWait,
    /// Anything else (JVM/runtime internals, unmatched native code, empty stacks).
    Other,
}

impl Category {
    pub const ALL: [Category; 8] = [
        Category::Application,
        Category::Gc,
        Category::Jit,
        Category::Vm,
        Category::Lock,
        Category::Io,
        Category::IdleWait,
        Category::Other,
    ];

    /// The contract string (`application`, `idle-wait`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Application => "application",
            Category::Gc => "gc",
            Category::Jit => "jit",
            Category::Vm => "vm",
            Category::Lock => "lock",
            Category::Io => "io",
            Category::IdleWait => "idle-wait",
            Category::Other => "other",
        }
    }

    /// How the category is named in sentences and tables.
    pub fn label(self) -> &'static str {
        match self {
            Category::Application => "application",
            Category::Gc => "GC",
            Category::Jit => "JIT",
            Category::Vm => "VM/safepoint",
            Category::Lock => "lock",
            Category::Io => "I/O",
            Category::IdleWait => "idle",
            Category::Other => "other",
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// JIT compiler threads (thread anchor).
const JIT: &[&str] = &[
    r"^CompileBroker::(compiler_thread_loop|invoke_compiler_on_method)$",
    r"^(C2Compiler|Compiler|JVMCICompiler)::compile_method$",
    r"^Compile::Compile$",
    r"^Compilation::Compilation$",
    r"^\[?C[12] CompilerThre",
];

/// GC threads and collections (thread anchor).
const GC: &[&str] = &[
    r"^VM_(G1CollectForAllocation|G1CollectFull|G1Concurrent|G1PauseConcurrent|G1TryInitiateConcMark|GenCollectForAllocation|GenCollectFull|ParallelGCFailedAllocation|ParallelCollectForAllocation|ParallelGCSystemGC|CollectForMetadataAllocation|GC_Operation|ZOperation|Shenandoah\w*)::",
    r"^(G1YoungCollector|G1FullCollector|G1ConcurrentMark(Thread)?|G1CMTask|G1ConcurrentRefine(Thread)?|G1PrimaryConcurrentRefineThread|G1YoungRemSetSamplingThread|G1ServiceThread|G1RemSet|G1ParScanThreadState|G1ParEvacuateFollowersClosure|G1EvacuateRegions(Base)?Task|G1RootProcessor|G1MergeHeapRootsTask|G1RebuildRemSetTask|G1ParCopyClosure<[^>]*>|G1ScanEvacuatedObjClosure)::",
    r"^G1CollectedHeap::(do_collection_pause_at_safepoint\w*|do_full_collection\w*|evacuate_collection_set)$",
    r"^(PSPromotionManager|PSScavenge|PSParallelCompact|ScavengeRootsTask|StealTask|GCTaskThread|DefNewGeneration|TenuredGeneration|MarkSweep|SerialFullGC|ConcurrentGCThread|ZDriver\w*|ZWorkers?|ZMark\w*|ZRelocate\w*|ShenandoahControlThread|ShenandoahConcurrentMark|CMSCollector)::",
    r"^GenCollectedHeap::(do_collection|collect_generation|satisfy_failed_allocation)$",
    r"^(GangWorker::loop|WorkerThread::run|AbstractGangWorker::run)$",
];

/// The VM thread (thread anchor): a non-GC VM operation is safepoint work.
const VM: &[&str] = &[
    r"^VMThread::(run|loop|inner_execute|evaluate_operation)$",
    r"^VM_Operation::evaluate$",
];

/// Safepoint synchronisation in application threads (nearest the leaf → `vm`).
const SAFEPOINT: &[&str] = &[
    r"^(SafepointSynchronize|SafepointMechanism|ThreadSafepointState|HandshakeState)::\w+$",
    r"^Handshake::execute$",
];

/// Lock waits (nearest the leaf).
const LOCK: &[&str] = &[
    r"^ObjectMonitor::(enter|EnterI|ReenterI|TrySpin|wait)$",
    r"^ObjectSynchronizer::(enter|slow_enter|fast_enter|inflate|wait)$",
    r"^InterpreterRuntime::monitorenter$",
    r"^SharedRuntime::(complete_monitor_locking_C|monitor_enter_helper)$",
    r"^Runtime1::monitorenter$",
    r"^Unsafe_Park$",
    r"^Parker::park$",
    r"^JVM_MonitorWait$",
    r"^(jdk/internal/misc|sun/misc)[/.]Unsafe\.park$",
    r"^java[/.]util[/.]concurrent[/.]locks[/.](LockSupport\.park\w*|AbstractQueuedSynchronizer\.acquire\w*|ReentrantLock\$\w+\.lock)$",
    r"^java[/.]lang[/.]Object\.wait0?$",
    r"^(pthread_mutex_lock|__lll_lock_wait|pthread_rwlock_(rd|wr)lock|futex_wait\w*|__futex_abstimed_wait\w*|do_futex|__(x64|arm64)_sys_futex)$",
    // CPython (py-spy frames `func (file:line)`): a contended threading lock.
    r"^(?:\w+\.)?acquire \((?:[^()]*/)?threading\.py(?::\d+)?\)$",
    // Go: a parked goroutine (mutex, channel, network wait) and a sleeping M.
    r"^runtime\.(gopark|goparkunlock|semacquire1|futexsleep|notesleep|notetsleepg|semasleep)$",
];

/// Frames that wait for work by themselves, wherever they are (nearest the
/// leaf): `threading.Condition.wait`/`Event.wait`, a thread join.
const IDLE: &[&str] = &[
    r"^(?:\w+\.)?(wait|_wait_for_tstate_lock) \((?:[^()]*/)?threading\.py(?::\d+)?\)$",
    // The kernel's idle loop (`swapper` in a system-wide `perf record -a`):
    // a CPU with nothing to run. Work it does for an interrupt under it
    // (softirq networking) has its own frames nearer the leaf.
    r"^(cpu_startup_entry|do_idle|cpu_idle|cpu_idle_loop|cpuidle_idle_call|cpuidle_enter|cpuidle_enter_state|arch_cpu_idle|default_idle|default_idle_call|native_safe_halt|intel_idle|intel_idle_irq|acpi_idle_enter|acpi_idle_do_entry|mwait_idle|poll_idle)$",
];

/// A lock or I/O wait anywhere under these is a thread waiting for work (→
/// `idle-wait`): pool threads on an empty queue, pollers and acceptors,
/// event loops between events, Go's netpoll and idle scheduler.
const IDLE_WAIT: &[&str] = &[
    r"^java[/.]util[/.]concurrent[/.](ThreadPoolExecutor\.getTask|LinkedBlockingQueue\.(take|poll)|SynchronousQueue\.(take|poll)|ScheduledThreadPoolExecutor\$DelayedWorkQueue\.take|ForkJoinPool\.awaitWork)$",
    r"^org[/.]apache[/.]tomcat[/.]util[/.]threads[/.]TaskQueue\.(take|poll)$",
    r"^org[/.]apache[/.]tomcat[/.]util[/.]net[/.](NioEndpoint\$Poller\.run|Acceptor\.run|NioEndpoint\.serverSocketAccept)$",
    r"^io[/.]netty[/.]channel[/.](nio[/.]NioEventLoop\.select|epoll[/.]EpollEventLoop\.epollWait\w*)$",
    // Go: the idle scheduler, net/http's accept loop, a connection waiting
    // for its request line and the background read of a connection. Not the
    // network poller as such: a handler waiting for its database parks in
    // netpoll too, and that is I/O of a request.
    r"^runtime\.(findRunnable|findrunnable|stopm)$",
    r"^net/http\.\(\*Server\)\.Serve$",
    r"^net/http\.\(\*conn\)\.readRequest$",
    r"^net/http\.\(\*connReader\)\.backgroundRead$",
    r"^(?:\w+\.)?get \((?:[^()]*/)?queue\.py(?::\d+)?\)$",
    r"^_worker \((?:[^()]*/)?concurrent/futures/thread\.py(?::\d+)?\)$",
];

/// A lock or I/O wait called directly by one of these is a server loop
/// waiting for work (→ `idle-wait`): `serve_forever` → `select`,
/// `get_request` → `accept`, `handle_one_request` → the read of the next
/// request on a kept-alive connection (a read further down, as in
/// `parse_headers` or a handler reading its body, stays I/O), asyncio's
/// `_run_once` → `select`.
const IDLE_CALLER: &[&str] = &[
    r"^(?:\w+\.)?(serve_forever|handle_request|get_request|handle_one_request) \((?:[^()]*/)?(socketserver|http/server)\.py(?::\d+)?\)$",
    r"^(?:\w+\.)?_run_once \((?:[^()]*/)?asyncio/base_events\.py(?::\d+)?\)$",
];

/// Socket and file I/O (nearest the leaf).
const IO: &[&str] = &[
    r"^(epoll_wait|epoll_pwait2?|__GI_epoll_wait|do_epoll_wait|ep_poll|poll|__poll|ppoll|select|do_sys_poll)$",
    r"^(read|__read|__libc_read|__GI___libc_read|pread64|__pread64|readv|write|__write|__libc_write|__GI___libc_write|pwrite64|writev|__writev|send|sendto|sendmsg|recv|recvfrom|recvmsg|__libc_(send|recv)|fsync|fdatasync)$",
    r"^(sys_|ksys_|__x64_sys_|__arm64_sys_|__se_sys_|__do_sys_)(read|write|pread64|pwrite64|readv|writev|sendto|recvfrom|sendmsg|recvmsg|fsync|fdatasync|poll|ppoll|select|pselect6|epoll_wait|epoll_pwait)$",
    r"^(vfs_read|vfs_write|tcp_sendmsg|tcp_recvmsg|sock_sendmsg|sock_recvmsg|inet_sendmsg|inet_recvmsg|sock_read_iter|sock_write_iter)$",
    r"^sun[/.]nio[/.]ch[/.](EPoll\.wait|EPollArrayWrapper\.epollWait|KQueue\.poll|Net\.poll|SocketDispatcher\.\w+0|(Unix)?FileDispatcherImpl\.\w+0|NioSocketImpl\.(read|write|timedRead|park))$",
    r"^sun/nio/ch/EPollArrayWrapper:\.epollWait$",
    r"^java[/.]net[/.](SocketInputStream\.socketRead0|SocketOutputStream\.socketWrite0|PlainSocketImpl\.socketAccept)$",
    r"^java[/.]io[/.](FileInputStream\.readBytes|FileOutputStream\.writeBytes|RandomAccessFile\.(read|write)Bytes)$",
    r"^Java_(sun_nio_ch|java_net|java_io)_\w+$",
    r"^(accept|accept4|__libc_accept)$",
    r"^sun[/.]nio[/.]ch[/.](Net\.accept|ServerSocketChannelImpl\.accept0?)$",
    r"^io[/.]netty[/.]channel[/.]epoll[/.]Native\.epollWait\w*$",
    // Go: the network poller.
    r"^runtime\.(epollwait|netpoll)$",
    r"^internal/poll\.runtime_pollWait$",
    // CPython (py-spy, `Class.func (file:line)`): socket/selector calls of the stdlib.
    r"^(?:\w+\.)?(select|poll|recv_into|recv|recvfrom|send|sendall|sendto|accept|readinto|readline|write|flush|connect) \((?:[^()]*/)?(socket|socketserver|selectors|ssl|_pyio)\.py(?::\d+)?\)$",
];

/// GC work inside application threads, reported as a separate share.
const GC_IN_MUTATOR: &[&str] = &[
    r"^G1CollectedHeap::attempt_allocation_(slow|at_safepoint)$",
    r"^MemAllocator::allocate_outside_tlab$",
    r"^(G1BarrierSet|G1BarrierSetRuntime)::",
    r"^AccessInternal::PostRuntimeDispatch<G1BarrierSet",
];

// Per-frame flags, computed once per distinct frame.
const F_JIT: u16 = 1;
const F_GC: u16 = 1 << 1;
const F_VM: u16 = 1 << 2;
const F_SAFEPOINT: u16 = 1 << 3;
const F_LOCK: u16 = 1 << 4;
const F_IDLE: u16 = 1 << 5;
const F_IO: u16 = 1 << 6;
const F_GC_MUTATOR: u16 = 1 << 7;
const F_APP: u16 = 1 << 8;
const F_IDLE_SELF: u16 = 1 << 9;
const F_IDLE_CALLER: u16 = 1 << 10;
const F_WAIT: u16 = F_LOCK | F_IO;

/// The compiled `[profiles]` settings: the rules (one alternation per
/// category, compiled once), whether idle is left out of busy shares, and
/// how frame names are normalised for comparison.
#[derive(Debug, Clone)]
pub struct Classifier {
    rules: Vec<(u16, Regex)>,
    app_prefixes: Vec<String>,
    app_patterns: Option<Regex>,
    exclude_idle: bool,
    normalisation: Normalisation,
    /// Flags of the frames matched so far, shared by clones (they have the
    /// same rules) and by the threads classifying endpoints in parallel: a
    /// frame's flags depend only on its name and the rules.
    memo: Arc<RwLock<HashMap<Box<str>, u16>>>,
}

/// Stacks and frames one classifier has classified, for the profiles of
/// one endpoint (a stack's category depends only on its frames and the
/// rules). Use one per classifier.
#[derive(Default)]
pub struct StackCategories<'p> {
    stacks: FastMap<&'p str, (Category, bool)>,
    frames: FastMap<&'p str, u16>,
    flags: Vec<u16>,
}

/// Distinct frames each memo holds at most; past it, new frames are matched
/// every time (still correct, only slower), so memory stays bounded.
const MEMO_FRAMES: usize = super::MEMO_ENTRIES;

impl Classifier {
    /// Compiles the default rules plus the configured ones. The error names
    /// the offending setting.
    pub fn new(settings: &ProfileSettings) -> Result<Classifier, String> {
        let r = &settings.rules;
        let lists: [(u16, &str, &[&str], &[String]); 10] = [
            (F_JIT, "rules.jit", JIT, &r.jit),
            (F_GC, "rules.gc", GC, &r.gc),
            (F_VM, "rules.vm", VM, &r.vm),
            (F_SAFEPOINT, "rules.safepoint", SAFEPOINT, &r.safepoint),
            (F_LOCK, "rules.lock", LOCK, &r.lock),
            (F_IDLE_SELF, "rules.idle", IDLE, &r.idle),
            (F_IDLE, "rules.idle_wait", IDLE_WAIT, &r.idle_wait),
            (
                F_IDLE_CALLER,
                "rules.idle_caller",
                IDLE_CALLER,
                &r.idle_caller,
            ),
            (F_IO, "rules.io", IO, &r.io),
            (
                F_GC_MUTATOR,
                "rules.gc_in_mutator",
                GC_IN_MUTATOR,
                &r.gc_in_mutator,
            ),
        ];
        let mut rules = Vec::new();
        for (flag, key, defaults, extra) in lists {
            for pattern in extra {
                Regex::new(pattern)
                    .map_err(|e| format!("{key}: invalid regular expression {pattern:?}: {e}"))?;
            }
            let mut all: Vec<&str> = if settings.default_rules {
                defaults.to_vec()
            } else {
                Vec::new()
            };
            all.extend(extra.iter().map(String::as_str));
            if let Some(re) = alternation(&all).map_err(|e| format!("{key}: {e}"))? {
                rules.push((flag, re));
            }
        }
        for pattern in &settings.application_patterns {
            Regex::new(pattern).map_err(|e| {
                format!("application_patterns: invalid regular expression {pattern:?}: {e}")
            })?;
        }
        let patterns: Vec<&str> = settings
            .application_patterns
            .iter()
            .map(String::as_str)
            .collect();
        let app_patterns =
            alternation(&patterns).map_err(|e| format!("application_patterns: {e}"))?;
        let app_prefixes = settings
            .application_prefixes
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| p.replace('.', "/"))
            .collect();
        Ok(Classifier {
            rules,
            app_prefixes,
            app_patterns,
            exclude_idle: settings.exclude_idle,
            normalisation: Normalisation::from_keep_lines(settings.keep_lines),
            memo: Arc::default(),
        })
    }

    /// Whether idle stacks are left out of the busy shares (`[profiles] exclude_idle`).
    pub fn excludes_idle(&self) -> bool {
        self.exclude_idle
    }

    /// How frame names are compared across profiles (`[profiles] keep_lines`).
    pub fn normalisation(&self) -> Normalisation {
        self.normalisation
    }

    /// Whether business code is configured (otherwise every unclaimed stack is application).
    pub fn has_application_rules(&self) -> bool {
        !self.app_prefixes.is_empty() || self.app_patterns.is_some()
    }

    /// [`frame_flags`](Self::frame_flags), matched once per classifier.
    fn memoised_frame_flags(&self, frame: &str) -> u16 {
        let known = self
            .memo
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(frame)
            .copied();
        if let Some(flags) = known {
            return flags;
        }
        let flags = self.frame_flags(frame);
        let mut memo = self.memo.write().unwrap_or_else(|p| p.into_inner());
        if memo.len() < MEMO_FRAMES {
            memo.insert(frame.into(), flags);
        }
        flags
    }

    fn frame_flags(&self, frame: &str) -> u16 {
        let name = strip_annotation(frame);
        let mut flags = 0;
        for (flag, re) in &self.rules {
            if re.is_match(name) {
                flags |= flag;
            }
        }
        if self.is_application(name) {
            flags |= F_APP;
        }
        flags
    }

    fn is_application(&self, name: &str) -> bool {
        if self
            .app_patterns
            .as_ref()
            .is_some_and(|re| re.is_match(name))
        {
            return true;
        }
        if self.app_prefixes.is_empty() {
            return false;
        }
        let slashed = name.replace('.', "/");
        let python = python_qualified_name(name).map(|q| q.replace('.', "/"));
        self.app_prefixes.iter().any(|p| {
            slashed.starts_with(p.as_str())
                || python.as_deref().is_some_and(|q| q.starts_with(p.as_str()))
        })
    }

    /// Calls `f(stack, weight, category, GC work in the mutator)` for every
    /// stack. Each distinct stack and frame is looked up once per `memo`
    /// (a local map, no lock), and each frame matched once per classifier.
    fn each_stack<'p>(
        &self,
        profile: &'p Profile,
        memo: &mut StackCategories<'p>,
        mut f: impl FnMut(&'p Stack, f64, Category, bool),
    ) {
        let StackCategories {
            stacks,
            frames,
            flags,
        } = memo;
        for (stack, &weight) in &profile.stacks {
            let known = stacks.get(&**stack).copied();
            let (category, in_mutator) = known.unwrap_or_else(|| {
                flags.clear();
                flags.extend(stack.split(';').map(|frame| match frames.get(frame) {
                    Some(&known) => known,
                    None => {
                        let found = self.memoised_frame_flags(frame);
                        if frames.len() < MEMO_FRAMES {
                            frames.insert(frame, found);
                        }
                        found
                    }
                }));
                let decided = self.decide(flags);
                if stacks.len() < super::MEMO_ENTRIES {
                    stacks.insert(stack, decided);
                }
                decided
            });
            f(stack, weight, category, in_mutator);
        }
    }

    /// Every stack of a profile with its weight and category.
    pub fn stack_categories<'p>(&self, profile: &'p Profile) -> Vec<(&'p Stack, f64, Category)> {
        let mut out = Vec::with_capacity(profile.stacks.len());
        let mut memo = StackCategories::default();
        self.each_stack(profile, &mut memo, |stack, weight, category, _| {
            out.push((stack, weight, category))
        });
        out
    }

    /// Whether a stack's category counts as busy time.
    pub fn is_busy(&self, category: Category) -> bool {
        !(self.exclude_idle && category == Category::IdleWait)
    }

    /// Classifies every stack of a profile.
    pub fn shares(&self, profile: &Profile) -> CategoryShares {
        self.shares_and_categories(profile).0
    }

    /// [`shares`](Self::shares) and [`stack_categories`](Self::stack_categories)
    /// in one pass over the stacks.
    pub fn shares_and_categories<'p>(
        &self,
        profile: &'p Profile,
    ) -> (CategoryShares, Vec<(&'p Stack, f64, Category)>) {
        self.shares_and_categories_with(profile, &mut StackCategories::default())
    }

    /// [`shares_and_categories`](Self::shares_and_categories), stacks
    /// classified before (by this classifier, into `memo`) not classified
    /// again: the profiles of one endpoint share most of their stacks.
    pub fn shares_and_categories_with<'p>(
        &self,
        profile: &'p Profile,
        memo: &mut StackCategories<'p>,
    ) -> (CategoryShares, Vec<(&'p Stack, f64, Category)>) {
        let mut weights: BTreeMap<Category, f64> = BTreeMap::new();
        let mut gc_in_mutator = 0.0;
        let mut categories = Vec::with_capacity(profile.stacks.len());
        self.each_stack(profile, memo, |stack, weight, category, in_mutator| {
            *weights.entry(category).or_insert(0.0) += weight;
            if in_mutator {
                gc_in_mutator += weight;
            }
            categories.push((stack, weight, category));
        });
        if profile.root_self > 0.0 {
            *weights.entry(Category::Other).or_insert(0.0) += profile.root_self;
        }
        let shares = CategoryShares::from_weights(
            profile.total,
            profile.samples,
            &weights,
            gc_in_mutator,
            self.exclude_idle,
        );
        (shares, categories)
    }

    /// The category of one stack given as `root;…;leaf`, every frame
    /// matched afresh (no memo): the reference the memoised path is tested
    /// against.
    pub fn classify_stack(&self, stack: &str) -> Category {
        let flags: Vec<u16> = stack.split(';').map(|f| self.frame_flags(f)).collect();
        self.decide(&flags).0
    }

    /// (category, whether GC work runs inside this application thread).
    fn decide(&self, flags: &[u16]) -> (Category, bool) {
        let any = flags.iter().fold(0, |acc, f| acc | f);
        if any & F_JIT != 0 {
            return (Category::Jit, false);
        }
        if any & F_GC != 0 {
            return (Category::Gc, false);
        }
        if any & F_VM != 0 {
            return (Category::Vm, false);
        }
        let in_mutator = any & F_GC_MUTATOR != 0;
        for (at, f) in flags.iter().enumerate().rev() {
            if f & F_IDLE_SELF != 0 {
                return (Category::IdleWait, in_mutator);
            }
            if f & F_SAFEPOINT != 0 {
                return (Category::Vm, in_mutator);
            }
            if f & F_WAIT != 0 {
                if any & F_IDLE != 0 || waits_for_an_idle_caller(flags, at) {
                    return (Category::IdleWait, in_mutator);
                }
                let category = if f & F_LOCK != 0 {
                    Category::Lock
                } else {
                    Category::Io
                };
                return (category, in_mutator);
            }
        }
        let category = if !self.has_application_rules() || any & F_APP != 0 {
            Category::Application
        } else {
            Category::Other
        };
        (category, in_mutator)
    }
}

/// Whether the wait at `at` (and the waits right above it: `recv` called by
/// `readinto`) is called directly by an idle caller.
fn waits_for_an_idle_caller(flags: &[u16], at: usize) -> bool {
    flags[..at]
        .iter()
        .rev()
        .find(|f| *f & F_WAIT == 0)
        .is_some_and(|f| f & F_IDLE_CALLER != 0)
}

/// One alternation of anchored patterns, or `None` for an empty list.
fn alternation(patterns: &[&str]) -> Result<Option<Regex>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let joined = patterns
        .iter()
        .map(|p| format!("(?:{p})"))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&joined).map(Some).map_err(|e| e.to_string())
}

/// Removes an annotation suffix `_[j]`, `_[k]`, `_[0]`, … (`_\[[0-9a-z]\]$`).
pub fn strip_annotation(frame: &str) -> &str {
    let b = frame.as_bytes();
    if b.len() >= 4
        && b[b.len() - 4..b.len() - 2] == *b"_["
        && b[b.len() - 1] == b']'
        && (b[b.len() - 2].is_ascii_digit() || b[b.len() - 2].is_ascii_lowercase())
    {
        &frame[..frame.len() - 4]
    } else {
        frame
    }
}

/// py-spy's `func (dir/module.py:line)` → `module.func`, so Python code can be
/// named by module prefix like Java code by package.
fn python_qualified_name(frame: &str) -> Option<String> {
    let inner = frame.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let func = &inner[..open];
    let location = &inner[open + 2..];
    let file = location.split(':').next()?;
    let stem = file.rsplit(['/', '\\']).next()?.strip_suffix(".py")?;
    Some(format!("{stem}.{func}"))
}

/// Category shares of one profile: of all its weight, and of its busy
/// weight (idle left out), in percent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryShares {
    pub total: f64,
    /// The profile's sample count, when the format records it.
    pub samples: Option<u64>,
    /// The weight that is not idle (all of it when idle is not excluded).
    pub busy: f64,
    /// Every category, in [`Category::ALL`] order, with its share of `total`.
    pub shares: Vec<(Category, f64)>,
    /// Every category but idle (when idle is excluded), with its share of `busy`.
    pub busy_shares: Vec<(Category, f64)>,
    /// Share of stacks (any category) that run GC work in the application
    /// thread: slow-path allocation, barriers; percent of `total`.
    pub gc_in_mutator_pct: f64,
}

impl CategoryShares {
    fn from_weights(
        total: f64,
        samples: Option<u64>,
        weights: &BTreeMap<Category, f64>,
        gc_in_mutator: f64,
        exclude_idle: bool,
    ) -> CategoryShares {
        let pct = |w: f64, of: f64| if of > 0.0 { 100.0 * w / of } else { 0.0 };
        let weight = |c: &Category| weights.get(c).copied().unwrap_or(0.0);
        let idle = if exclude_idle {
            weight(&Category::IdleWait)
        } else {
            0.0
        };
        let busy = (total - idle).max(0.0);
        CategoryShares {
            total,
            samples,
            busy,
            shares: Category::ALL
                .iter()
                .map(|c| (*c, pct(weight(c), total)))
                .collect(),
            busy_shares: Category::ALL
                .iter()
                .filter(|c| !(exclude_idle && **c == Category::IdleWait))
                .map(|c| (*c, pct(weight(c), busy)))
                .collect(),
            gc_in_mutator_pct: pct(gc_in_mutator, total),
        }
    }

    /// The share of one category in all the weight, in percent.
    pub fn pct(&self, category: Category) -> f64 {
        self.shares
            .iter()
            .find(|(c, _)| *c == category)
            .map(|(_, p)| *p)
            .unwrap_or(0.0)
    }

    /// The share of one category in the busy weight, in percent (0 for idle
    /// when idle is excluded).
    pub fn busy_pct(&self, category: Category) -> f64 {
        self.busy_shares
            .iter()
            .find(|(c, _)| *c == category)
            .map(|(_, p)| *p)
            .unwrap_or(0.0)
    }

    /// Whether idle weight is left out of [`busy_shares`](Self::busy_shares).
    pub fn excludes_idle(&self) -> bool {
        self.busy_shares.len() < self.shares.len()
    }

    /// The share of idle weight in all of it, in percent.
    pub fn idle_pct(&self) -> f64 {
        self.pct(Category::IdleWait)
    }

    /// How many samples the busy weight holds: the sample count scaled by
    /// the busy share of the weight (exact when every sample weighs the
    /// same, as with py-spy and async-profiler). `None` when the format
    /// records no sample count.
    pub fn busy_samples(&self) -> Option<f64> {
        let samples = self.samples? as f64;
        Some(if self.total > 0.0 {
            samples * self.busy / self.total
        } else {
            0.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classifier(prefixes: &[&str]) -> Classifier {
        let settings = ProfileSettings {
            application_prefixes: prefixes.iter().map(|s| s.to_string()).collect(),
            ..ProfileSettings::default()
        };
        Classifier::new(&settings).unwrap()
    }

    #[test]
    fn thread_anchors_win_over_leaf_rules() {
        let c = classifier(&[]);
        // G1 barrier code inside a compiler thread is JIT work (FORMATS.md §6 pitfall a).
        assert_eq!(
            c.classify_stack(
                "thread_native_entry;CompileBroker::compiler_thread_loop;G1BarrierSetC2::expand"
            ),
            Category::Jit
        );
        assert_eq!(
            c.classify_stack("VMThread::run;VM_GenCollectForAllocation::doit;pthread_mutex_lock"),
            Category::Gc
        );
        assert_eq!(
            c.classify_stack("VMThread::run;VM_Deoptimize::doit"),
            Category::Vm
        );
    }

    #[test]
    fn nearest_leaf_match_decides_application_threads() {
        let c = classifier(&["com.acme."]);
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;com/acme/Orders.list;java/util/HashMap.get"),
            Category::Application
        );
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;com/acme/Orders.list;java/net/SocketInputStream.socketRead0_[j]"),
            Category::Io
        );
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;com/acme/Orders.list;ObjectMonitor::enter"),
            Category::Lock
        );
        assert_eq!(
            c.classify_stack(
                "java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor.getTask;java/util/concurrent/locks/LockSupport.park"
            ),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;java/util/HashMap.get"),
            Category::Other
        );
        assert_eq!(
            c.classify_stack("start_thread;SafepointSynchronize::block"),
            Category::Vm
        );
    }

    #[test]
    fn without_prefixes_unclaimed_stacks_are_application() {
        let c = classifier(&[]);
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;java/util/HashMap.get"),
            Category::Application
        );
    }

    #[test]
    fn python_frames_answer_to_module_prefixes() {
        let c = classifier(&["orders_service."]);
        assert_eq!(
            c.classify_stack("<module> (orders_service.py:90);handle (/srv/app/orders_service.py:41);slow_scan (/srv/app/orders_service.py:20)"),
            Category::Application
        );
        assert_eq!(
            c.classify_stack(
                "Handler.do_GET (orders_service.py:58);SocketIO.readinto (socket.py:706)"
            ),
            Category::Io
        );
        assert_eq!(
            c.classify_stack(
                "Handler.do_GET (orders_service.py:58);_SocketWriter.write (socketserver.py:834)"
            ),
            Category::Io
        );
        assert_eq!(
            c.classify_stack("Thread.start (threading.py:964);Lock.acquire (threading.py:327)"),
            Category::Lock
        );
        assert_eq!(
            c.classify_stack("serve_forever (socketserver.py:235)"),
            Category::Other
        );
    }

    /// The stacks of `tests/fixtures/pyspy-shop` (py-spy 0.4.3, CPython
    /// 3.11, `ThreadingHTTPServer` with keep-alive): waiting for work is
    /// idle, a read or write inside a request is I/O.
    #[test]
    fn python_server_loops_waiting_for_work_are_idle() {
        let c = classifier(&[]);
        const HANDLE: &str = "Thread._bootstrap (/usr/lib/python3.11/threading.py:1002);\
            ThreadingMixIn.process_request_thread (/usr/lib/python3.11/socketserver.py:691);\
            BaseHTTPRequestHandler.handle (/usr/lib/python3.11/http/server.py:438)";
        let stack = |tail: &str| format!("{HANDLE};{tail}");
        // The next request on a kept-alive connection.
        assert_eq!(
            c.classify_stack(&stack("BaseHTTPRequestHandler.handle_one_request (/usr/lib/python3.11/http/server.py:404);SocketIO.readinto (/usr/lib/python3.11/socket.py:706)")),
            Category::IdleWait
        );
        // Headers of a request already under way, and a handler's own reads and writes.
        assert_eq!(
            c.classify_stack(&stack("BaseHTTPRequestHandler.handle_one_request (http/server.py:414);BaseHTTPRequestHandler.parse_request (http/server.py:346);parse_headers (http/client.py:243);SocketIO.readinto (socket.py:706)")),
            Category::Io
        );
        assert_eq!(
            c.classify_stack(&stack("BaseHTTPRequestHandler.handle_one_request (http/server.py:424);Handler.do_POST (shop.py:40);SocketIO.readinto (socket.py:706)")),
            Category::Io
        );
        assert_eq!(
            c.classify_stack(&stack("BaseHTTPRequestHandler.handle_one_request (http/server.py:424);Handler.do_GET (shop.py:100);BaseHTTPRequestHandler.end_headers (http/server.py:538);BaseHTTPRequestHandler.flush_headers (http/server.py:542);_SocketWriter.write (socketserver.py:834)")),
            Category::Io
        );
        // The accept loop, asyncio between events, threads waiting on a condition.
        assert_eq!(
            c.classify_stack("<module> (/srv/app/v1/shop.py:110);BaseServer.serve_forever (socketserver.py:233);_PollLikeSelector.select (selectors.py:415)"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("BaseServer.serve_forever (socketserver.py:238);BaseServer._handle_request_noblock (socketserver.py:306);TCPServer.get_request (socketserver.py:507);socket.accept (socket.py:294)"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("run (asyncio/runners.py:190);BaseEventLoop.run_forever (asyncio/base_events.py:607);BaseEventLoop._run_once (asyncio/base_events.py:1884);EpollSelector.select (selectors.py:468)"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("Thread.start (threading.py:964);Event.wait (threading.py:622);Condition.wait (threading.py:320)"),
            Category::IdleWait
        );
        // A single-threaded server handles requests under serve_forever: its I/O stays I/O.
        assert_eq!(
            c.classify_stack("BaseServer.serve_forever (socketserver.py:238);BaseServer._handle_request_noblock (socketserver.py:316);BaseServer.process_request (socketserver.py:347);BaseServer.finish_request (socketserver.py:360);BaseRequestHandler.__init__ (socketserver.py:755);Handler.handle (app.py:9);_SocketWriter.write (socketserver.py:834)"),
            Category::Io
        );
    }

    #[test]
    fn jvm_and_go_waits_for_work_are_idle() {
        let c = classifier(&[]);
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;org/apache/tomcat/util/net/NioEndpoint$Poller.run;sun/nio/ch/SelectorImpl.select;sun/nio/ch/EPollSelectorImpl.doSelect;sun/nio/ch/EPoll.wait;epoll_wait"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;org/apache/tomcat/util/threads/ThreadPoolExecutor$Worker.run;org/apache/tomcat/util/threads/ThreadPoolExecutor.getTask;org/apache/tomcat/util/threads/TaskQueue.take;java/util/concurrent/LinkedBlockingQueue.take;java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject.await;java/util/concurrent/locks/LockSupport.park;jdk/internal/misc/Unsafe.park"),
            Category::IdleWait
        );
        // The poller doing work is not idle; a request thread's socket read is I/O.
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;org/apache/tomcat/util/net/NioEndpoint$Poller.run;org/apache/tomcat/util/net/NioEndpoint$Poller.processKey"),
            Category::Application
        );
        assert_eq!(
            c.classify_stack("java/lang/Thread.run;org/postgresql/core/PGStream.receiveChar;sun/nio/ch/NioSocketImpl.read;sun/nio/ch/SocketDispatcher.read0;read"),
            Category::Io
        );
        assert_eq!(
            c.classify_stack("net/http.(*conn).serve;net/http.(*conn).readRequest;bufio.(*Reader).Peek;net.(*conn).Read;internal/poll.(*FD).Read;internal/poll.(*pollDesc).waitRead;internal/poll.runtime_pollWait;runtime.netpollblock;runtime.gopark"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("runtime.mstart;runtime.schedule;runtime.findRunnable;runtime.netpoll;runtime.epollwait"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("net/http.(*Server).ListenAndServe;net/http.(*Server).Serve;net/http.(*onceCloseListener).Accept;net.(*TCPListener).Accept;net.(*TCPListener).accept;net.(*netFD).accept;internal/poll.(*FD).Accept;internal/poll.(*pollDesc).waitRead;internal/poll.runtime_pollWait;runtime.netpollblock;runtime.gopark"),
            Category::IdleWait
        );
        // A handler waiting for its database parks in netpoll as well: that
        // wait is part of a request, never idle (a wall-clock profile of a
        // slow query must not lose it).
        let db_wait = c.classify_stack("net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;main.handler;database/sql.(*DB).QueryContext;github.com/lib/pq.(*conn).recvMessage;bufio.(*Reader).Read;net.(*conn).Read;internal/poll.(*FD).Read;internal/poll.(*pollDesc).waitRead;internal/poll.runtime_pollWait;runtime.netpollblock;runtime.gopark");
        assert!(
            matches!(db_wait, Category::Io | Category::Lock),
            "{db_wait:?}"
        );
        assert_eq!(
            c.classify_stack("main.handler;sync.(*Mutex).Lock;sync.(*Mutex).lockSlow;runtime.semacquire1;runtime.gopark"),
            Category::Lock
        );
    }

    /// Stacks of the system-wide `perf record -a` in `FlameGraph`'s
    /// `example-perf-stacks.txt.gz`: the idle task is idle, the kernel's TCP
    /// work under a request is I/O, and an interrupt's softirq network work
    /// run from the idle loop is I/O too.
    #[test]
    fn the_kernel_idle_loop_is_idle() {
        let c = classifier(&[]);
        assert_eq!(
            c.classify_stack("swapper;x86_64_start_kernel;start_kernel;rest_init;cpu_startup_entry;arch_cpu_idle;cpuidle_idle_call;cpuidle_enter_state;intel_idle"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("swapper;start_secondary;cpu_startup_entry;arch_cpu_idle;cpuidle_idle_call;call_function_single_interrupt;smp_call_function_single_interrupt;native_write_msr_safe"),
            Category::IdleWait
        );
        assert_eq!(
            c.classify_stack("java;start_thread;java_start;sys_write;vfs_write;sock_aio_write;inet_sendmsg;tcp_sendmsg"),
            Category::Io
        );
        assert_eq!(
            c.classify_stack("swapper;start_secondary;cpu_startup_entry;do_IRQ;irq_exit;__do_softirq;net_rx_action;tcp_v4_rcv;tcp_sendmsg"),
            Category::Io
        );
    }

    #[test]
    fn idle_rules_are_configurable() {
        let mut settings = ProfileSettings::default();
        settings
            .rules
            .idle_caller
            .push(r"^Worker\.next_job$".to_string());
        settings.rules.idle.push(r"^park_forever$".to_string());
        let c = Classifier::new(&settings).unwrap();
        assert_eq!(
            c.classify_stack("main;Worker.next_job;recv"),
            Category::IdleWait
        );
        assert_eq!(c.classify_stack("main;Worker.run;recv"), Category::Io);
        assert_eq!(c.classify_stack("main;park_forever"), Category::IdleWait);
        // Counted as busy when asked to.
        let p = crate::profile::parse_folded(
            "main;Worker.next_job;recv 3\nmain;work 1\n",
            std::path::Path::new("f"),
            "cpu",
        )
        .unwrap();
        let s = c.shares(&p);
        assert_eq!(
            (s.idle_pct(), s.busy, s.busy_pct(Category::Application)),
            (75.0, 1.0, 100.0)
        );
        settings.exclude_idle = false;
        let s = Classifier::new(&settings).unwrap().shares(&p);
        assert_eq!((s.busy, s.busy_pct(Category::IdleWait)), (4.0, 75.0));
        settings.rules.idle_wait.push("(".to_string());
        assert!(
            Classifier::new(&settings)
                .unwrap_err()
                .contains("rules.idle_wait")
        );
    }

    #[test]
    fn annotation_suffixes_are_stripped() {
        assert_eq!(strip_annotation("vfs_read_[k]"), "vfs_read");
        assert_eq!(strip_annotation("Foo.bar_[j]"), "Foo.bar");
        assert_eq!(strip_annotation("[unknown]"), "[unknown]");
        assert_eq!(strip_annotation("_[k]"), "");
    }

    #[test]
    fn bad_extra_rule_names_the_key() {
        let mut settings = ProfileSettings::default();
        settings.rules.lock.push("(unclosed".to_string());
        let err = Classifier::new(&settings).unwrap_err();
        assert!(err.contains("rules.lock"), "{err}");
    }

    #[test]
    fn extra_rules_and_disabled_defaults() {
        let mut settings = ProfileSettings::default();
        settings.rules.gc.push(r"^my_gc_thread$".to_string());
        let c = Classifier::new(&settings).unwrap();
        assert_eq!(c.classify_stack("my_gc_thread;work"), Category::Gc);
        settings.default_rules = false;
        let c = Classifier::new(&settings).unwrap();
        assert_eq!(
            c.classify_stack("GangWorker::loop;x"),
            Category::Application
        );
        assert_eq!(c.classify_stack("my_gc_thread;work"), Category::Gc);
    }
}
