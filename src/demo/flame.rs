//! Synthetic 30 s CPU profiles in async-profiler `-o collapsed` form:
//! one `frame;frame;…;leaf count` line per distinct stack, root first,
//! counts in samples (10 ms interval, so ~100 samples per busy core-second).
//!
//! The stacks follow what async-profiler 3.x prints for a Spring Boot
//! service on JDK 21 with G1: Java threads rooted at `java/lang/Thread.run`
//! (Tomcat workers, the NIO poller), and native HotSpot threads rooted at
//! `start_thread;thread_native_entry;Thread::call_run` (G1 workers, the VM
//! thread, C1/C2 compiler threads, concurrent refinement). C++ frames carry
//! no argument lists, as in async-profiler's HTML and collapsed output.
//! Frame names match the thread anchors of the classification rules
//! (docs/profiles.md, "Categories"), so the attribution rules see
//! application, GC, JIT, VM, lock and I/O width.

use std::collections::BTreeMap;

use super::rng::Rng;
use super::story::{EndpointDef, EventKind};

const TOMCAT: &str = "java/lang/Thread.run;org/apache/tomcat/util/threads/TaskThread$WrappingRunnable.run;\
org/apache/tomcat/util/threads/ThreadPoolExecutor$Worker.run;org/apache/tomcat/util/threads/ThreadPoolExecutor.runWorker;\
org/apache/tomcat/util/net/SocketProcessorBase.run;org/apache/tomcat/util/net/NioEndpoint$SocketProcessor.doRun;\
org/apache/coyote/AbstractProtocol$ConnectionHandler.process;org/apache/coyote/AbstractProcessorLight.process;\
org/apache/coyote/http11/Http11Processor.service";

// The servlet container's valves and filter chain (the security and
// observation filters are left out to keep the files small).
const VALVES: &str = "org/apache/catalina/connector/CoyoteAdapter.service;org/apache/catalina/core/StandardEngineValve.invoke;\
org/apache/catalina/core/StandardHostValve.invoke;org/apache/catalina/core/StandardContextValve.invoke;\
org/apache/catalina/core/StandardWrapperValve.invoke;org/apache/catalina/core/ApplicationFilterChain.doFilter;\
org/apache/catalina/core/ApplicationFilterChain.internalDoFilter;jakarta/servlet/http/HttpServlet.service;\
org/springframework/web/servlet/FrameworkServlet.service;jakarta/servlet/http/HttpServlet.service";

const DISPATCH: &str = "org/springframework/web/servlet/FrameworkServlet.processRequest;\
org/springframework/web/servlet/DispatcherServlet.doService;org/springframework/web/servlet/DispatcherServlet.doDispatch;\
org/springframework/web/servlet/mvc/method/AbstractHandlerMethodAdapter.handle;\
org/springframework/web/servlet/mvc/method/annotation/RequestMappingHandlerAdapter.handleInternal;\
org/springframework/web/servlet/mvc/method/annotation/RequestMappingHandlerAdapter.invokeHandlerMethod;\
org/springframework/web/servlet/mvc/method/annotation/ServletInvocableHandlerMethod.invokeAndHandle";

const INVOKE: &str = "org/springframework/web/method/support/InvocableHandlerMethod.invokeForRequest;\
org/springframework/web/method/support/InvocableHandlerMethod.doInvoke;java/lang/reflect/Method.invoke;\
jdk/internal/reflect/DirectMethodHandleAccessor.invoke";

const JDBC_QUERY: &str = "org/springframework/jdbc/core/JdbcTemplate.query;org/springframework/jdbc/core/JdbcTemplate.execute";
const JDBC_UPDATE: &str = "org/springframework/jdbc/core/JdbcTemplate.update;org/springframework/jdbc/core/JdbcTemplate.execute";
const PG_EXEC: &str = "com/zaxxer/hikari/pool/HikariProxyPreparedStatement.executeQuery;\
org/postgresql/jdbc/PgPreparedStatement.executeQuery;org/postgresql/jdbc/PgPreparedStatement.executeWithFlags;\
org/postgresql/jdbc/PgStatement.executeInternal;org/postgresql/core/v3/QueryExecutorImpl.execute";
const PG_READ: &str = "org/postgresql/core/v3/QueryExecutorImpl.processResults;org/postgresql/core/PGStream.receiveChar;\
org/postgresql/core/VisibleBufferedInputStream.read;org/postgresql/core/VisibleBufferedInputStream.readMore;\
java/net/Socket$SocketInputStream.read;sun/nio/ch/NioSocketImpl.read;sun/nio/ch/NioSocketImpl.implRead;\
sun/nio/ch/NioSocketImpl.tryRead;sun/nio/ch/SocketDispatcher.read0;read";
const PG_TUPLES: &str = "org/postgresql/core/v3/QueryExecutorImpl.processResults;org/postgresql/core/PGStream.receiveTupleV3";
const PG_SEND: &str = "org/postgresql/core/v3/QueryExecutorImpl.sendQuery;org/postgresql/core/v3/QueryExecutorImpl.sendOneQuery;\
org/postgresql/core/v3/QueryExecutorImpl.sendBind;org/postgresql/core/PGStream.send;sun/nio/ch/NioSocketImpl.write;\
sun/nio/ch/NioSocketImpl.implWrite;sun/nio/ch/SocketDispatcher.write0;write";

const JACKSON_WRITE: &str = "org/springframework/web/method/support/HandlerMethodReturnValueHandlerComposite.handleReturnValue;\
org/springframework/web/servlet/mvc/method/annotation/RequestResponseBodyMethodProcessor.handleReturnValue;\
org/springframework/web/servlet/mvc/method/annotation/AbstractMessageConverterMethodProcessor.writeWithMessageConverters;\
org/springframework/http/converter/AbstractGenericHttpMessageConverter.write;\
org/springframework/http/converter/json/AbstractJackson2HttpMessageConverter.writeInternal;\
com/fasterxml/jackson/databind/ObjectWriter.writeValue;com/fasterxml/jackson/databind/ObjectWriter$Prefetch.serialize;\
com/fasterxml/jackson/databind/ser/DefaultSerializerProvider.serializeValue;com/fasterxml/jackson/databind/ser/BeanSerializer.serialize;\
com/fasterxml/jackson/databind/ser/std/BeanSerializerBase.serializeFields";

const JACKSON_READ: &str = "org/springframework/web/method/support/InvocableHandlerMethod.getMethodArgumentValues;\
org/springframework/web/method/support/HandlerMethodArgumentResolverComposite.resolveArgument;\
org/springframework/web/servlet/mvc/method/annotation/RequestResponseBodyMethodProcessor.resolveArgument;\
org/springframework/web/servlet/mvc/method/annotation/RequestResponseBodyMethodProcessor.readWithMessageConverters;\
org/springframework/web/servlet/mvc/method/annotation/AbstractMessageConverterMethodArgumentResolver.readWithMessageConverters;\
org/springframework/http/converter/json/AbstractJackson2HttpMessageConverter.read;\
org/springframework/http/converter/json/AbstractJackson2HttpMessageConverter.readJavaType;\
com/fasterxml/jackson/databind/ObjectReader.readValue;com/fasterxml/jackson/databind/ObjectReader._bindAndClose;\
com/fasterxml/jackson/databind/deser/BeanDeserializer.deserialize;com/fasterxml/jackson/databind/deser/BeanDeserializer.vanillaDeserialize";

const ALLOC_SLOW: &str = "OptoRuntime::new_array_C;MemAllocator::allocate;MemAllocator::allocate_inside_tlab_slow;\
G1CollectedHeap::allocate_new_tlab;G1CollectedHeap::attempt_allocation_slow";

const NATIVE: &str = "start_thread;thread_native_entry;Thread::call_run";
const G1_EVAC: &str =
    "WorkerThread::run;G1EvacuateRegionsTask::work;G1EvacuateRegionsBaseTask::work";
const G1_FOLLOW: &str =
    "G1EvacuateRegionsBaseTask::evacuate_live_objects;G1ParEvacuateFollowersClosure::do_void";
const VM_G1: &str = "VMThread::run;VMThread::inner_execute;VMThread::evaluate_operation;VM_Operation::evaluate;\
VM_G1CollectForAllocation::doit;G1CollectedHeap::do_collection_pause_at_safepoint;\
G1CollectedHeap::do_collection_pause_at_safepoint_helper;G1YoungCollector::collect";
const C2: &str = "JavaThread::run;JavaThread::thread_main_inner;CompileBroker::compiler_thread_loop;\
CompileBroker::invoke_compiler_on_method;C2Compiler::compile_method;Compile::Compile";
const C1: &str = "JavaThread::run;JavaThread::thread_main_inner;CompileBroker::compiler_thread_loop;\
CompileBroker::invoke_compiler_on_method;Compiler::compile_method;Compilation::Compilation;Compilation::compile_method;\
Compilation::compile_java_method";

/// Accumulates weighted stacks, then jitters and rounds them to samples.
struct Folded {
    stacks: Vec<(String, f64)>,
}

impl Folded {
    fn add(&mut self, parts: &[&str], weight: f64) {
        if weight > 0.0 {
            self.stacks.push((parts.join(";"), weight));
        }
    }

    fn render(self, rng: &mut Rng) -> String {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, weight) in self.stacks {
            let jittered = weight * rng.factor(0.1).max(0.3);
            let samples = (jittered + rng.uniform()).floor() as u64;
            if samples > 0 {
                *counts.entry(stack).or_default() += samples;
            }
        }
        let mut out = String::new();
        for (stack, n) in counts {
            out.push_str(&stack);
            out.push(' ');
            out.push_str(&n.to_string());
            out.push('\n');
        }
        out
    }
}

/// The stack prefixes a request of one endpoint runs under.
struct Frames<'a> {
    post: bool,
    dispatch: String,
    service: String,
    repo: String,
    db_call: &'static str,
    pkg: &'a str,
}

impl<'a> Frames<'a> {
    fn of(def: &'a EndpointDef) -> Frames<'a> {
        let post = def.name.starts_with("POST");
        let verb = if post {
            "org/springframework/web/servlet/FrameworkServlet.doPost"
        } else {
            "org/springframework/web/servlet/FrameworkServlet.doGet"
        };
        let dispatch = [TOMCAT, VALVES, verb, DISPATCH].join(";");
        let handler = [dispatch.as_str(), INVOKE, def.controller].join(";");
        let service = [handler.as_str(), def.service].join(";");
        let repo = [service.as_str(), def.repository].join(";");
        let db_call = if post { JDBC_UPDATE } else { JDBC_QUERY };
        let pkg = def
            .service
            .rsplit_once('/')
            .map(|(p, _)| p)
            .unwrap_or("com/acme");
        Frames {
            post,
            dispatch,
            service,
            repo,
            db_call,
            pkg,
        }
    }
}

/// The magnitude of event `kind` in `events`, if it is active.
fn magnitude(events: &[(EventKind, f64)], kind: EventKind) -> Option<f64> {
    events.iter().find(|(k, _)| *k == kind).map(|(_, m)| *m)
}

/// A profile of `def` under load, with the events active in that run.
/// `events` holds (kind, magnitude) for this endpoint. The stacks are added
/// in a fixed order (the jitter is drawn in that order), thread group by
/// thread group.
pub(crate) fn profile(def: &EndpointDef, events: &[(EventKind, f64)], rng: &mut Rng) -> String {
    let mut f = Folded { stacks: Vec::new() };
    let frames = Frames::of(def);
    // Application CPU per 30 s: busier endpoints and heavier bodies cost more.
    let improvement = magnitude(events, EventKind::Improvement).unwrap_or(1.0);
    let app = (420.0 + def.rate_rps * 6.0 + def.base_p99_ms * 1.5) * improvement;
    request_threads(&mut f, def, &frames, app);
    event_stacks(&mut f, def, &frames, events, app);
    gc_threads(
        &mut f,
        &frames,
        magnitude(events, EventKind::GcRegression),
        app,
    );
    compiler_and_vm_threads(&mut f, app);
    f.render(rng)
}

/// Request threads: Tomcat, Spring MVC, business code, JDBC, Jackson.
fn request_threads(f: &mut Folded, def: &EndpointDef, frames: &Frames, app: f64) {
    let (dispatch, service, repo) = (&frames.dispatch, &frames.service, &frames.repo);
    let (post, db_call, pkg) = (frames.post, frames.db_call, frames.pkg);
    f.add(
        &[
            TOMCAT,
            "org/apache/coyote/http11/Http11InputBuffer.parseRequestLine",
        ],
        app * 0.015,
    );
    f.add(&[TOMCAT, "org/apache/coyote/http11/Http11InputBuffer.parseHeaders;org/apache/coyote/http11/Http11InputBuffer.parseHeader"], app * 0.02);
    f.add(
        &[TOMCAT, "org/apache/catalina/connector/CoyoteAdapter.service;org/apache/catalina/connector/Response.finishResponse;\
org/apache/catalina/connector/OutputBuffer.close;org/apache/coyote/http11/Http11Processor.finishResponse;\
org/apache/coyote/http11/Http11OutputBuffer.end;org/apache/tomcat/util/net/NioEndpoint$NioSocketWrapper.doWrite;\
sun/nio/ch/SocketChannelImpl.write;sun/nio/ch/IOUtil.write;sun/nio/ch/SocketDispatcher.write0;write"],
        app * 0.035,
    );
    f.add(&[dispatch.as_str(), "org/springframework/web/servlet/DispatcherServlet.getHandler;org/springframework/web/servlet/handler/AbstractHandlerMethodMapping.lookupHandlerMethod;org/springframework/web/util/pattern/PathPattern.matches"], app * 0.03);
    f.add(&[dispatch.as_str(), "org/springframework/web/servlet/DispatcherServlet.processDispatchResult;org/springframework/web/servlet/DispatcherServlet.triggerAfterCompletion"], app * 0.008);
    f.add(&[repo.as_str(), db_call, PG_EXEC, PG_READ], app * 0.16);
    f.add(&[repo.as_str(), db_call, PG_EXEC, PG_TUPLES], app * 0.06);
    f.add(&[repo.as_str(), db_call, PG_EXEC, PG_SEND], app * 0.05);
    f.add(&[repo.as_str(), db_call, "org/springframework/jdbc/datasource/DataSourceUtils.getConnection;com/zaxxer/hikari/HikariDataSource.getConnection;com/zaxxer/hikari/pool/HikariPool.getConnection;com/zaxxer/hikari/util/ConcurrentBag.borrow"], app * 0.012);
    let mapper = format!(
        "{pkg}/RowMappers.map;org/postgresql/jdbc/PgResultSet.getString;org/postgresql/jdbc/PgResultSet.getFixedString;java/lang/String.<init>"
    );
    f.add(
        &[
            repo.as_str(),
            JDBC_QUERY,
            "org/springframework/jdbc/core/RowMapperResultSetExtractor.extractData",
            mapper.as_str(),
        ],
        app * 0.05 * (def.response_bytes / 2000.0).clamp(0.3, 3.0),
    );
    f.add(&[repo.as_str(), JDBC_QUERY, "org/springframework/jdbc/core/RowMapperResultSetExtractor.extractData;org/postgresql/jdbc/PgResultSet.next;org/postgresql/jdbc/PgResultSet.getTimestamp;org/postgresql/jdbc/TimestampUtils.toTimestamp"], app * 0.02);
    let dto = format!(
        "{pkg}/DtoMapper.toDto;java/util/stream/ReferencePipeline$3$1.accept;java/util/ArrayList.add"
    );
    f.add(&[service.as_str(), dto.as_str()], app * 0.05);
    let validate =
        format!("{pkg}/Validation.check;java/util/HashMap.get;java/lang/String.hashCode");
    f.add(&[service.as_str(), validate.as_str()], app * 0.03);
    f.add(&[service.as_str(), "ch/qos/logback/classic/Logger.info;ch/qos/logback/classic/Logger.filterAndLog_1;ch/qos/logback/classic/Logger.callAppenders;ch/qos/logback/core/OutputStreamAppender.subAppend;ch/qos/logback/classic/encoder/PatternLayoutEncoder.encode;ch/qos/logback/core/pattern/PatternLayoutBase.writeLoopOnConverters"], app * 0.025);
    f.add(&[service.as_str(), "ch/qos/logback/classic/Logger.info;ch/qos/logback/classic/Logger.filterAndLog_1;ch/qos/logback/classic/Logger.callAppenders;ch/qos/logback/core/OutputStreamAppender.subAppend;ch/qos/logback/core/OutputStreamAppender.writeBytes;java/util/concurrent/locks/ReentrantLock.lock;java/util/concurrent/locks/AbstractQueuedSynchronizer.acquire;java/util/concurrent/locks/LockSupport.park;jdk/internal/misc/Unsafe.park;Unsafe_Park;Parker::park;__pthread_cond_wait"], app * 0.008);
    if post {
        f.add(&[dispatch.as_str(), INVOKE, def.controller, "org/springframework/transaction/interceptor/TransactionInterceptor.invoke;org/springframework/transaction/interceptor/TransactionAspectSupport.commitTransactionAfterReturning;org/springframework/jdbc/datasource/DataSourceTransactionManager.doCommit;com/zaxxer/hikari/pool/HikariProxyConnection.commit;org/postgresql/jdbc/PgConnection.commit;org/postgresql/core/v3/QueryExecutorImpl.execute", PG_READ], app * 0.05);
        f.add(&[dispatch.as_str(), "org/springframework/web/servlet/mvc/method/annotation/ServletInvocableHandlerMethod.invokeAndHandle", JACKSON_READ, "com/fasterxml/jackson/core/json/UTF8StreamJsonParser.nextFieldName"], app * 0.03 * (def.request_bytes / 800.0).clamp(0.3, 2.5));
        f.add(&[dispatch.as_str(), "org/springframework/web/servlet/mvc/method/annotation/ServletInvocableHandlerMethod.invokeAndHandle", JACKSON_READ, "com/fasterxml/jackson/databind/deser/impl/MethodProperty.deserializeAndSet;com/fasterxml/jackson/databind/deser/std/StringDeserializer.deserialize"], app * 0.02);
    }
    let body = (def.response_bytes / 1500.0).clamp(0.2, 4.0);
    f.add(&[dispatch.as_str(), JACKSON_WRITE, "com/fasterxml/jackson/databind/ser/BeanPropertyWriter.serializeAsField;com/fasterxml/jackson/core/json/UTF8JsonGenerator.writeString"], app * 0.05 * body);
    f.add(&[dispatch.as_str(), JACKSON_WRITE, "com/fasterxml/jackson/databind/ser/BeanPropertyWriter.serializeAsField;com/fasterxml/jackson/databind/ser/std/NumberSerializer.serialize;com/fasterxml/jackson/core/json/UTF8JsonGenerator.writeNumber"], app * 0.025 * body);
    f.add(&[dispatch.as_str(), JACKSON_WRITE, "com/fasterxml/jackson/databind/ser/BeanPropertyWriter.serializeAsField;com/fasterxml/jackson/databind/ser/std/CollectionSerializer.serialize;com/fasterxml/jackson/databind/ser/BeanSerializer.serialize"], app * 0.03 * body);
    f.add(&[service.as_str(), ALLOC_SLOW], app * 0.006);
    // Monitor contention where writes share a ledger.
    if def.id.starts_with("inventory-reserve")
        || def.id.starts_with("create-order")
        || def.id.starts_with("cart-checkout")
    {
        f.add(&[service.as_str(), "com/acme/inventory/StockLedger.reserve;SharedRuntime::complete_monitor_locking_C;ObjectSynchronizer::enter;ObjectMonitor::enter;ObjectMonitor::EnterI"], app * 0.025);
        f.add(&[service.as_str(), "com/acme/inventory/StockLedger.reserve;SharedRuntime::complete_monitor_locking_C;ObjectSynchronizer::enter;ObjectMonitor::enter;ObjectMonitor::TrySpin"], app * 0.012);
    }
}

/// What the events add to the request threads.
fn event_stacks(
    f: &mut Folded,
    def: &EndpointDef,
    frames: &Frames,
    events: &[(EventKind, f64)],
    app: f64,
) {
    let (service, repo, pkg) = (&frames.service, &frames.repo, frames.pkg);
    let improvement = magnitude(events, EventKind::Improvement).unwrap_or(1.0);
    let magnitude = |kind: EventKind| magnitude(events, kind);
    if let Some(m) = magnitude(EventKind::CodeRegression) {
        let extra = app * (m - 1.0) * 1.6;
        match def.id {
            "inventory-lookup" => {
                let scan = format!("{repo};com/acme/inventory/InventoryRepository.scanAllSkus");
                f.add(
                    &[
                        scan.as_str(),
                        "com/acme/inventory/Sku.matchesPrefix;java/lang/String.startsWith",
                    ],
                    extra * 0.38,
                );
                f.add(&[scan.as_str(), "com/acme/inventory/Sku.matchesPrefix;java/lang/String.regionMatches;java/lang/StringLatin1.regionMatchesCI"], extra * 0.22);
                f.add(
                    &[scan.as_str(), "java/util/ArrayList$Itr.next"],
                    extra * 0.18,
                );
                f.add(
                    &[scan.as_str(), "java/util/ArrayList$Itr.hasNext"],
                    extra * 0.07,
                );
                f.add(&[scan.as_str(), "com/acme/inventory/SkuCatalog.snapshot;java/util/ArrayList.<init>;java/util/Arrays.copyOf"], extra * 0.1);
                f.add(&[scan.as_str(), "com/acme/inventory/SkuCatalog.snapshot;java/util/ArrayList.<init>;java/util/Arrays.copyOf", ALLOC_SLOW], extra * 0.05);
            }
            "order-search" => {
                let matcher =
                    format!("{service};com/acme/orders/search/CustomerNameMatcher.matches");
                f.add(&[matcher.as_str(), "java/util/regex/Pattern.compile;java/util/regex/Pattern.<init>;java/util/regex/Pattern.compile;java/util/regex/Pattern.expr;java/util/regex/Pattern.sequence"], extra * 0.34);
                f.add(&[matcher.as_str(), "java/util/regex/Pattern.compile;java/util/regex/Pattern.<init>;java/util/regex/Pattern.compile;java/util/regex/Pattern.RemoveQEQuoting"], extra * 0.14);
                f.add(&[matcher.as_str(), "java/util/regex/Pattern.compile;java/util/regex/Pattern.<init>;java/util/regex/Pattern.compile;java/util/regex/Pattern.expr;java/util/regex/Pattern.sequence;java/util/regex/Pattern.newCharProperty"], extra * 0.12);
                f.add(&[matcher.as_str(), "java/util/regex/Pattern.matcher;java/util/regex/Matcher.<init>;java/util/regex/Matcher.reset"], extra * 0.16);
                f.add(&[matcher.as_str(), "java/util/regex/Matcher.matches;java/util/regex/Matcher.match;java/util/regex/Pattern$Start.match;java/util/regex/Pattern$Slice.match"], extra * 0.24);
            }
            _ => {
                // An N+1 query: the discount rules are loaded and mapped
                // once per line item instead of once per quote, so the
                // width lands in the pricing code's loop, the row mapping
                // and the extra round trips.
                let rules = format!("{service};{pkg}/DiscountRules.forLine");
                let per_item = format!(
                    "{rules};com/acme/pricing/DiscountRuleRepository.findByProduct;{JDBC_QUERY}"
                );
                f.add(&[rules.as_str(), "com/acme/pricing/DiscountRule.applies;com/acme/pricing/ProductMatcher.matches;java/util/HashSet.contains"], extra * 0.16);
                f.add(&[rules.as_str(), "com/acme/pricing/DiscountRule.apply;java/math/BigDecimal.multiply;java/math/BigDecimal.setScale"], extra * 0.12);
                f.add(&[per_item.as_str(), "org/springframework/jdbc/core/RowMapperResultSetExtractor.extractData;com/acme/pricing/DiscountRuleRowMapper.mapRow;org/postgresql/jdbc/PgResultSet.getBigDecimal"], extra * 0.16);
                f.add(&[per_item.as_str(), "org/springframework/jdbc/core/RowMapperResultSetExtractor.extractData;com/acme/pricing/DiscountRuleRowMapper.mapRow;com/acme/pricing/DiscountRule.<init>;java/util/HashSet.<init>"], extra * 0.1);
                f.add(&[per_item.as_str(), PG_EXEC, PG_READ], extra * 0.2);
                f.add(&[per_item.as_str(), PG_EXEC, PG_SEND], extra * 0.12);
                f.add(&[per_item.as_str(), PG_EXEC, PG_TUPLES], extra * 0.08);
                f.add(&[per_item.as_str(), "org/springframework/jdbc/datasource/DataSourceUtils.getConnection;com/zaxxer/hikari/HikariDataSource.getConnection;com/zaxxer/hikari/pool/HikariPool.getConnection;com/zaxxer/hikari/util/ConcurrentBag.borrow"], extra * 0.06);
            }
        }
    }
    if let Some(m) = magnitude(EventKind::AcceptedChange) {
        let extra = app * (m - 1.0) * 1.2;
        let client = format!(
            "{service};com/acme/cart/FraudCheckClient.check;org/springframework/web/client/RestTemplate.exchange;org/springframework/web/client/RestTemplate.doExecute"
        );
        f.add(&[client.as_str(), "org/springframework/http/client/AbstractClientHttpRequest.execute;org/springframework/http/client/SimpleClientHttpRequest.executeInternal;sun/net/www/protocol/http/HttpURLConnection.getInputStream;sun/net/www/http/HttpClient.parseHTTP;java/io/BufferedInputStream.fill;java/net/Socket$SocketInputStream.read;sun/nio/ch/NioSocketImpl.read;sun/nio/ch/NioSocketImpl.implRead;sun/nio/ch/NioSocketImpl.tryRead;sun/nio/ch/SocketDispatcher.read0;read"], extra * 0.45);
        f.add(&[client.as_str(), "org/springframework/web/client/RestTemplate$ResponseEntityResponseExtractor.extractData;org/springframework/web/client/HttpMessageConverterExtractor.extractData;com/fasterxml/jackson/databind/ObjectMapper.readValue;com/fasterxml/jackson/databind/deser/BeanDeserializer.deserialize"], extra * 0.3);
        f.add(&[client.as_str(), "org/springframework/http/client/AbstractClientHttpRequest.execute;org/springframework/http/client/SimpleClientHttpRequest.executeInternal;sun/net/www/protocol/http/HttpURLConnection.connect;sun/net/NetworkClient.doConnect;java/net/Socket.connect;sun/nio/ch/NioSocketImpl.connect"], extra * 0.25);
    }
    if improvement < 1.0 {
        f.add(&[service.as_str(), "com/github/benmanes/caffeine/cache/BoundedLocalCache.computeIfAbsent;com/github/benmanes/caffeine/cache/BoundedLocalCache.afterRead;com/github/benmanes/caffeine/cache/BoundedBuffer$RingBuffer.offer"], app * 0.05);
        f.add(&[service.as_str(), "com/github/benmanes/caffeine/cache/BoundedLocalCache.computeIfAbsent;java/util/concurrent/ConcurrentHashMap.get"], app * 0.03);
    }
}

/// GC: G1 young collections, scaled by allocation pressure.
fn gc_threads(f: &mut Folded, frames: &Frames, gc_regression: Option<f64>, app: f64) {
    let service = &frames.service;
    let gc = app * 0.16 * gc_regression.map(|m| 1.0 + (m - 1.0) * 9.0).unwrap_or(1.0);
    if let Some(m) = gc_regression {
        let audit = format!("{service};com/acme/orders/audit/AuditBuffer.append");
        f.add(
            &[
                audit.as_str(),
                "java/nio/HeapByteBuffer.put;java/nio/HeapByteBuffer.putArray",
            ],
            app * (m - 1.0) * 0.25,
        );
        f.add(
            &[
                audit.as_str(),
                "java/nio/ByteBuffer.allocate;java/nio/HeapByteBuffer.<init>",
                ALLOC_SLOW,
            ],
            app * (m - 1.0) * 0.3,
        );
        f.add(&[service.as_str(), ALLOC_SLOW, "G1CollectedHeap::do_collection_pause;G1CollectedHeap::attempt_allocation_at_safepoint"], app * (m - 1.0) * 0.1);
    }
    f.add(&[NATIVE, G1_EVAC, G1_FOLLOW, "G1ParScanThreadState::trim_queue_to_threshold;G1ParScanThreadState::do_copy_to_survivor_space"], gc * 0.34);
    f.add(
        &[
            NATIVE,
            G1_EVAC,
            G1_FOLLOW,
            "G1ParScanThreadState::trim_queue_to_threshold;G1ScanEvacuatedObjClosure::do_oop_work",
        ],
        gc * 0.16,
    );
    f.add(
        &[
            NATIVE,
            G1_EVAC,
            G1_FOLLOW,
            "G1ParScanThreadState::steal_and_trim_queue;GenericTaskQueueSet::steal_best_of_2",
        ],
        gc * 0.08,
    );
    f.add(&[NATIVE, G1_EVAC, "G1EvacuateRegionsTask::scan_roots;G1RemSet::scan_heap_roots;G1ScanHRForRegionClosure::do_heap_region;G1ScanHRForRegionClosure::scan_heap_roots"], gc * 0.12);
    f.add(&[NATIVE, G1_EVAC, "G1EvacuateRegionsTask::scan_roots;G1RootProcessor::evacuate_roots;G1RootProcessor::process_java_roots;Threads::possibly_parallel_oops_do;JavaThread::oops_do_frames;frame::oops_do_internal"], gc * 0.07);
    f.add(&[NATIVE, "WorkerThread::run;G1MergeHeapRootsTask::work;G1MergeHeapRootsTask::G1MergeCardSetClosure::do_heap_region"], gc * 0.05);
    f.add(&[NATIVE, "WorkerThread::run;G1BatchedTask::work;G1PostEvacuateCollectionSetCleanupTask2::FreeCollectionSetTask::do_work"], gc * 0.03);
    f.add(
        &[
            NATIVE,
            VM_G1,
            "G1YoungCollector::pre_evacuate_collection_set;G1YoungCollector::prepare_tlabs",
        ],
        gc * 0.03,
    );
    f.add(&[NATIVE, VM_G1, "G1YoungCollector::post_evacuate_collection_set;G1YoungCollector::process_discovered_references"], gc * 0.03);
    f.add(&[NATIVE, "ConcurrentGCThread::run;G1ConcurrentRefineThread::run_service;G1ConcurrentRefineThread::do_refinement_step;G1DirtyCardQueueSet::refine_completed_buffer_concurrently;G1RemSet::refine_card_concurrently"], gc * 0.05);
    f.add(&[NATIVE, "ConcurrentGCThread::run;G1ServiceThread::run_service;G1ServiceThread::run_task;G1RemSetSamplingTask::execute"], gc * 0.01);
}

/// JIT: C2 and C1 compiler threads, still busy in a 30 s window; VM thread
/// safepoints, the NIO poller and housekeeping.
fn compiler_and_vm_threads(f: &mut Folded, app: f64) {
    let jit = app * 0.2;
    f.add(&[NATIVE, C2, "Compile::Optimize;PhaseIdealLoop::optimize;PhaseIdealLoop::build_and_optimize;PhaseIdealLoop::build_loop_late"], jit * 0.2);
    f.add(
        &[
            NATIVE,
            C2,
            "Compile::Optimize;PhaseIterGVN::optimize;PhaseIterGVN::transform_old",
        ],
        jit * 0.18,
    );
    f.add(
        &[
            NATIVE,
            C2,
            "Compile::Code_Gen;PhaseChaitin::Register_Allocate;PhaseChaitin::build_ifg_physical",
        ],
        jit * 0.16,
    );
    f.add(
        &[NATIVE, C2, "Compile::Code_Gen;Matcher::match"],
        jit * 0.08,
    );
    f.add(&[NATIVE, C2, "ParseGenerator::generate;Parse::Parse;Parse::do_all_blocks;Parse::do_one_block;Parse::do_call"], jit * 0.14);
    f.add(&[NATIVE, C1, "Compilation::emit_code_body"], jit * 0.1);
    f.add(&[NATIVE, C1, "Compilation::build_hir"], jit * 0.08);
    f.add(&[NATIVE, "JavaThread::run;JavaThread::thread_main_inner;CompileBroker::compiler_thread_loop;CompileBroker::possibly_add_compiler_threads"], jit * 0.02);

    // VM thread safepoints, the NIO poller and housekeeping.
    f.add(&[NATIVE, "VMThread::run;VMThread::inner_execute;SafepointSynchronize::begin;SafepointSynchronize::synchronize_threads"], app * 0.01);
    f.add(&[NATIVE, "VMThread::run;VMThread::inner_execute;VMThread::evaluate_operation;VM_Operation::evaluate;VM_HandshakeAllThreads::doit"], app * 0.004);
    f.add(&["java/lang/Thread.run;org/apache/tomcat/util/net/NioEndpoint$Poller.run;sun/nio/ch/SelectorImpl.select;sun/nio/ch/SelectorImpl.lockAndDoSelect;sun/nio/ch/EPollSelectorImpl.doSelect;sun/nio/ch/EPoll.wait;epoll_wait"], app * 0.05);
    f.add(&["java/lang/Thread.run;org/apache/tomcat/util/net/NioEndpoint$Poller.run;org/apache/tomcat/util/net/NioEndpoint$Poller.processKey;org/apache/tomcat/util/net/AbstractEndpoint.processSocket;org/apache/tomcat/util/threads/ThreadPoolExecutor.execute;org/apache/tomcat/util/threads/TaskQueue.offer"], app * 0.012);
    f.add(&["java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor$Worker.run;java/util/concurrent/ThreadPoolExecutor.runWorker;java/util/concurrent/ScheduledThreadPoolExecutor$ScheduledFutureTask.run;com/zaxxer/hikari/pool/HikariPool$HouseKeeper.run;com/zaxxer/hikari/pool/HikariPool.fillPool"], app * 0.002);
    f.add(&["java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor$Worker.run;java/util/concurrent/ThreadPoolExecutor.runWorker;java/util/concurrent/ThreadPoolExecutor.getTask;java/util/concurrent/LinkedBlockingQueue.take;java/util/concurrent/locks/LockSupport.park;jdk/internal/misc/Unsafe.park;Unsafe_Park;Parker::park;__pthread_cond_wait"], app * 0.003);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::story::ENDPOINTS;

    fn parse(text: &str) -> Vec<(String, u64)> {
        text.lines()
            .map(|l| {
                let (stack, n) = l.rsplit_once(' ').expect("stack and count");
                (stack.to_string(), n.parse().expect("count"))
            })
            .collect()
    }

    fn share(lines: &[(String, u64)], pred: impl Fn(&str) -> bool) -> f64 {
        let total: u64 = lines.iter().map(|(_, n)| n).sum();
        let hit: u64 = lines.iter().filter(|(s, _)| pred(s)).map(|(_, n)| n).sum();
        hit as f64 / total as f64
    }

    #[test]
    fn lines_are_folded_stacks_root_first() {
        let def = ENDPOINTS.iter().find(|e| e.id == "order-list").unwrap();
        let text = profile(def, &[], &mut Rng::new(1));
        let lines = parse(&text);
        assert!(
            lines.len() > 40 && lines.len() < 400,
            "{} lines",
            lines.len()
        );
        for (stack, n) in &lines {
            assert!(*n > 0);
            let root = stack.split(';').next().unwrap();
            assert!(
                root == "java/lang/Thread.run" || root == "start_thread",
                "{root}"
            );
            assert!(!stack.contains('(') && !stack.contains(' '), "{stack}");
        }
    }

    #[test]
    fn code_regression_widens_business_frames_and_gc_regression_widens_g1() {
        let inv = ENDPOINTS
            .iter()
            .find(|e| e.id == "inventory-lookup")
            .unwrap();
        let before = parse(&profile(inv, &[], &mut Rng::new(2)));
        let after = parse(&profile(
            inv,
            &[(EventKind::CodeRegression, 1.6)],
            &mut Rng::new(2),
        ));
        let acme =
            |s: &str| s.starts_with("java/lang/Thread.run") && s.contains("com/acme/inventory/");
        assert!(share(&after, acme) > share(&before, acme) + 0.10);
        assert!(
            after
                .iter()
                .any(|(s, _)| s.contains("InventoryRepository.scanAllSkus"))
        );

        let create = ENDPOINTS.iter().find(|e| e.id == "create-order").unwrap();
        let before = parse(&profile(create, &[], &mut Rng::new(3)));
        let after = parse(&profile(
            create,
            &[(EventKind::GcRegression, 1.3)],
            &mut Rng::new(3),
        ));
        let g1 = |s: &str| {
            s.starts_with("start_thread") && (s.contains(";G1") || s.contains("WorkerThread::run"))
        };
        assert!(
            share(&after, g1) > share(&before, g1) + 0.10,
            "{} → {}",
            share(&before, g1),
            share(&after, g1)
        );
    }
}
