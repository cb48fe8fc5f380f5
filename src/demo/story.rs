//! The service the demo archive describes, and what happens to it.
//!
//! An order/inventory service (Spring Boot on a JVM behind Tomcat) with 12
//! endpoints, load-tested three times a week. Events are placed at fixed
//! (week, weekday) positions counted from the first Monday of the
//! history; an event that starts after the last run is left out, and one
//! that would run past it ends with the history.

/// One endpoint of the demo service.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EndpointDef {
    /// Folder name in each run.
    pub id: &'static str,
    /// Display name in perfdash.toml.
    pub name: &'static str,
    /// Typical p99 in ms when nothing is wrong.
    pub base_p99_ms: f64,
    /// Median as a share of p99 (how heavy the tail is).
    pub med_share: f64,
    /// k6 constant-arrival-rate target, requests per second.
    pub rate_rps: f64,
    /// Response and request body sizes (bytes), for data_received/sent.
    pub response_bytes: f64,
    pub request_bytes: f64,
    /// Multiplies the run-to-run and round-to-round noise.
    pub noise_scale: f64,
    /// Chance that a round catches a GC pause in its tail.
    pub gc_tail_chance: f64,
    /// Usual share of failed requests.
    pub error_rate: f64,
    /// Business frames for the flame graphs: controller, service, data access.
    pub controller: &'static str,
    pub service: &'static str,
    pub repository: &'static str,
}

/// The 12 endpoints, in folder-name order.
pub(crate) const ENDPOINTS: [EndpointDef; 12] = [
    EndpointDef {
        id: "cancel-order",
        name: "POST /api/orders/{id}/cancel",
        base_p99_ms: 120.0,
        med_share: 0.34,
        rate_rps: 20.0,
        response_bytes: 310.0,
        request_bytes: 96.0,
        noise_scale: 1.0,
        gc_tail_chance: 0.06,
        error_rate: 0.0004,
        controller: "com/acme/orders/web/OrderController.cancelOrder",
        service: "com/acme/orders/OrderService.cancel",
        repository: "com/acme/orders/OrderRepository.updateStatus",
    },
    EndpointDef {
        id: "cart-checkout",
        name: "POST /api/cart/checkout",
        base_p99_ms: 320.0,
        med_share: 0.40,
        rate_rps: 25.0,
        response_bytes: 780.0,
        request_bytes: 1450.0,
        noise_scale: 1.1,
        gc_tail_chance: 0.08,
        error_rate: 0.0008,
        controller: "com/acme/cart/web/CartController.checkout",
        service: "com/acme/cart/CheckoutService.checkout",
        repository: "com/acme/cart/CartRepository.loadCart",
    },
    EndpointDef {
        id: "create-order",
        name: "POST /api/orders",
        base_p99_ms: 240.0,
        med_share: 0.36,
        rate_rps: 40.0,
        response_bytes: 640.0,
        request_bytes: 1180.0,
        noise_scale: 1.0,
        gc_tail_chance: 0.08,
        error_rate: 0.0005,
        controller: "com/acme/orders/web/OrderController.createOrder",
        service: "com/acme/orders/OrderService.createOrder",
        repository: "com/acme/orders/OrderRepository.insert",
    },
    EndpointDef {
        id: "customer-profile",
        name: "GET /api/customers/{id}",
        base_p99_ms: 55.0,
        med_share: 0.30,
        rate_rps: 90.0,
        response_bytes: 1320.0,
        request_bytes: 0.0,
        noise_scale: 0.9,
        gc_tail_chance: 0.05,
        error_rate: 0.0002,
        controller: "com/acme/customers/web/CustomerController.getProfile",
        service: "com/acme/customers/CustomerService.profile",
        repository: "com/acme/customers/CustomerRepository.findById",
    },
    EndpointDef {
        id: "health",
        name: "GET /health",
        base_p99_ms: 20.0,
        med_share: 0.25,
        rate_rps: 10.0,
        response_bytes: 62.0,
        request_bytes: 0.0,
        noise_scale: 0.7,
        gc_tail_chance: 0.03,
        error_rate: 0.0,
        controller: "org/springframework/boot/actuate/endpoint/web/servlet/AbstractWebMvcEndpointHandlerMapping$OperationHandler.handle",
        service: "org/springframework/boot/actuate/health/HealthEndpoint.health",
        repository: "org/springframework/boot/actuate/jdbc/DataSourceHealthIndicator.doHealthCheck",
    },
    EndpointDef {
        id: "inventory-lookup",
        name: "GET /api/inventory/{sku}",
        base_p99_ms: 35.0,
        med_share: 0.32,
        rate_rps: 150.0,
        response_bytes: 420.0,
        request_bytes: 0.0,
        noise_scale: 0.9,
        gc_tail_chance: 0.05,
        error_rate: 0.0002,
        controller: "com/acme/inventory/web/InventoryController.getItem",
        service: "com/acme/inventory/InventoryService.lookup",
        repository: "com/acme/inventory/InventoryRepository.findBySku",
    },
    EndpointDef {
        id: "inventory-reserve",
        name: "POST /api/inventory/reservations",
        base_p99_ms: 150.0,
        med_share: 0.38,
        rate_rps: 35.0,
        response_bytes: 260.0,
        request_bytes: 340.0,
        noise_scale: 1.0,
        gc_tail_chance: 0.06,
        error_rate: 0.0006,
        controller: "com/acme/inventory/web/ReservationController.reserve",
        service: "com/acme/inventory/ReservationService.reserve",
        repository: "com/acme/inventory/ReservationRepository.insert",
    },
    EndpointDef {
        id: "order-detail",
        name: "GET /api/orders/{id}",
        base_p99_ms: 45.0,
        med_share: 0.33,
        rate_rps: 120.0,
        response_bytes: 2150.0,
        request_bytes: 0.0,
        noise_scale: 0.9,
        gc_tail_chance: 0.05,
        error_rate: 0.0002,
        controller: "com/acme/orders/web/OrderController.getOrder",
        service: "com/acme/orders/OrderService.findOrder",
        repository: "com/acme/orders/OrderRepository.findById",
    },
    EndpointDef {
        id: "order-list",
        name: "GET /api/orders",
        base_p99_ms: 180.0,
        med_share: 0.36,
        rate_rps: 60.0,
        response_bytes: 5600.0,
        request_bytes: 0.0,
        noise_scale: 1.0,
        gc_tail_chance: 0.06,
        error_rate: 0.0003,
        controller: "com/acme/orders/web/OrderController.listOrders",
        service: "com/acme/orders/OrderService.findOrders",
        repository: "com/acme/orders/OrderRepository.findPage",
    },
    EndpointDef {
        id: "order-search",
        name: "GET /api/orders/search",
        base_p99_ms: 380.0,
        med_share: 0.42,
        rate_rps: 20.0,
        response_bytes: 8800.0,
        request_bytes: 0.0,
        noise_scale: 1.15,
        gc_tail_chance: 0.07,
        error_rate: 0.0004,
        controller: "com/acme/orders/web/OrderSearchController.search",
        service: "com/acme/orders/search/OrderSearchService.search",
        repository: "com/acme/orders/search/OrderSearchRepository.query",
    },
    EndpointDef {
        id: "price-quote",
        name: "POST /api/pricing/quote",
        base_p99_ms: 70.0,
        med_share: 0.35,
        rate_rps: 80.0,
        response_bytes: 540.0,
        request_bytes: 620.0,
        noise_scale: 1.0,
        gc_tail_chance: 0.05,
        error_rate: 0.0002,
        controller: "com/acme/pricing/web/PricingController.quote",
        service: "com/acme/pricing/QuoteService.quote",
        repository: "com/acme/pricing/DiscountRuleRepository.findActive",
    },
    EndpointDef {
        id: "stock-levels",
        name: "GET /api/inventory/stock-levels",
        base_p99_ms: 90.0,
        med_share: 0.36,
        rate_rps: 45.0,
        response_bytes: 3900.0,
        request_bytes: 0.0,
        noise_scale: 1.0,
        gc_tail_chance: 0.06,
        error_rate: 0.0003,
        controller: "com/acme/inventory/web/StockController.levels",
        service: "com/acme/inventory/StockService.levels",
        repository: "com/acme/inventory/StockRepository.levelsByWarehouse",
    },
];

/// What an event does to the numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A code change makes every request slower (the whole distribution
    /// scales); flame graphs show it in business frames.
    CodeRegression,
    /// A configuration change makes GC work harder: the tail (p99, max)
    /// grows much more than the median; flame graphs show G1 threads.
    GcRegression,
    /// Another tenant on the load-test host: every endpoint of one run is
    /// slower by about the same share, and rounds are burstier.
    NoisyNeighbour,
    /// A change that makes the endpoint faster.
    Improvement,
    /// A deliberate change that costs latency; the team accepts the new level.
    AcceptedChange,
    /// The endpoint's round-to-round noise grows (no level change).
    NoiseGrowth,
    /// A slow, steady climb over the whole history (data growth); a rolling
    /// baseline follows it and never alarms.
    SlowDrift,
    /// A release makes a share of the endpoint's requests fail (quick 5xx
    /// answers; `magnitude` is the error rate): latency looks fine, the
    /// error rate does not.
    Errors,
    /// One round of one run lost the service (every connection refused):
    /// a failed round, left out of the medians; the run is short of rounds.
    FailedRound,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::CodeRegression => "code-regression",
            EventKind::GcRegression => "gc-regression",
            EventKind::NoisyNeighbour => "noisy-neighbour",
            EventKind::Improvement => "improvement",
            EventKind::AcceptedChange => "accepted-change",
            EventKind::NoiseGrowth => "noise-growth",
            EventKind::SlowDrift => "slow-drift",
            EventKind::Errors => "errors",
            EventKind::FailedRound => "failed-round",
        }
    }

    /// The triage label a human gives an alarm this event causes.
    pub fn triage_label(self) -> &'static str {
        match self {
            EventKind::CodeRegression | EventKind::GcRegression | EventKind::Errors => "real",
            EventKind::AcceptedChange => "accepted",
            _ => "noise",
        }
    }
}

/// An event in the schedule. `endpoint = None` means every endpoint.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventDef {
    pub kind: EventKind,
    pub endpoint: Option<&'static str>,
    /// Week from the first Monday, and weekday slot (0 Mon, 1 Wed, 2 Fri).
    pub week: u32,
    pub slot: u32,
    /// How many runs it lasts; `None` = to the end of the history.
    pub runs: Option<u32>,
    /// Multiplier on the p99 level (1.6 = +60 %); for noise growth, on the
    /// round noise; for slow drift, the level reached at the last run.
    pub magnitude: f64,
    /// run.toml `notes` on the first affected run.
    pub start_note: &'static str,
    /// run.toml `notes` on the run after the last affected run (the fix).
    pub fix_note: &'static str,
    /// What the triage note says about alarms it causes.
    pub triage_note: &'static str,
}

pub(crate) const EVENTS: [EventDef; 12] = [
    EventDef {
        kind: EventKind::SlowDrift,
        endpoint: Some("order-list"),
        week: 0,
        slot: 0,
        runs: None,
        magnitude: 1.10,
        start_note: "",
        fix_note: "",
        triage_note: "orders table keeps growing; page query slowly gets slower",
    },
    EventDef {
        kind: EventKind::NoisyNeighbour,
        endpoint: None,
        week: 5,
        slot: 1,
        runs: Some(1),
        magnitude: 1.10,
        start_note: "",
        fix_note: "",
        triage_note: "noisy neighbour: the run landed on the shared host perf-shared-03 during a batch job; every endpoint ~10% slower, nothing changed in the service",
    },
    EventDef {
        kind: EventKind::CodeRegression,
        endpoint: Some("inventory-lookup"),
        week: 8,
        slot: 2,
        runs: Some(5),
        magnitude: 1.60,
        start_note: "PR #412 merged: inventory lookup by SKU prefix",
        fix_note: "PR #431: restore the SKU index lookup (fixes the inventory-lookup slowdown from PR #412)",
        triage_note: "index lookup gone wrong: since PR #412 InventoryRepository scans all SKUs (scanAllSkus in the flame graph); fixed by PR #431",
    },
    EventDef {
        kind: EventKind::FailedRound,
        endpoint: Some("customer-profile"),
        week: 9,
        slot: 1,
        runs: Some(1),
        magnitude: 1.0,
        start_note: "round 3 of customer-profile: the service restarted under the test (connection refused)",
        fix_note: "",
        triage_note: "",
    },
    EventDef {
        kind: EventKind::Errors,
        endpoint: Some("cancel-order"),
        week: 10,
        slot: 2,
        runs: Some(3),
        magnitude: 0.06,
        start_note: "release 1.6.0: cancellation emails through the new notification client",
        fix_note: "hotfix: the notification client no longer throws on orders without an e-mail address (fixes the cancel-order 5xx from 1.6.0)",
        triage_note: "release 1.6.0 broke cancel-order for orders without an e-mail address: 6% of cancellations answer 500 (NullPointerException in NotificationClient); latency unchanged; hotfixed",
    },
    EventDef {
        kind: EventKind::GcRegression,
        endpoint: Some("create-order"),
        week: 12,
        slot: 0,
        runs: Some(3),
        magnitude: 1.30,
        start_note: "config: order audit buffer moved on-heap (audit.buffer=heap)",
        fix_note: "config: audit buffer back off-heap (audit.buffer=direct)",
        triage_note: "GC/config: on-heap audit buffer doubles allocation in createOrder; G1 young collections take the width; reverted in config",
    },
    EventDef {
        kind: EventKind::CodeRegression,
        endpoint: Some("order-search"),
        week: 14,
        slot: 1,
        runs: Some(6),
        // ×1.35: order-search is the noisiest endpoint (noise ×1.15, GC
        // tails 7%), its noise line sits near ×1.19, and a drift in the
        // weeks before lifts its baseline ~10%; the story's regression is
        // one the default gate flags on every run it lasts.
        magnitude: 1.35,
        start_note: "PR #455: order search supports wildcard customer names",
        fix_note: "PR #470: precompile the search patterns once (fixes the order-search slowdown from PR #455)",
        triage_note: "code: since PR #455 every search compiles its regex patterns per row (Pattern.compile in the flame graph); fixed by PR #470",
    },
    EventDef {
        kind: EventKind::NoisyNeighbour,
        endpoint: None,
        week: 17,
        slot: 1,
        runs: Some(1),
        magnitude: 1.09,
        start_note: "",
        fix_note: "",
        triage_note: "noisy neighbour: shared host perf-shared-03 again (backup job); all endpoints lifted together, service unchanged",
    },
    EventDef {
        kind: EventKind::Improvement,
        endpoint: Some("order-detail"),
        week: 18,
        slot: 0,
        runs: None,
        magnitude: 0.70,
        start_note: "PR #477: response cache for order detail",
        fix_note: "",
        triage_note: "",
    },
    EventDef {
        kind: EventKind::NoiseGrowth,
        endpoint: Some("stock-levels"),
        week: 19,
        slot: 0,
        runs: None,
        magnitude: 2.0,
        start_note: "PR #481: stock levels read through the shared warehouse cache",
        fix_note: "",
        triage_note: "stock-levels has been jumpier since it reads through the shared warehouse cache; level unchanged",
    },
    EventDef {
        kind: EventKind::AcceptedChange,
        endpoint: Some("cart-checkout"),
        week: 20,
        slot: 1,
        runs: None,
        magnitude: 1.35,
        start_note: "PR #502: checkout calls the fraud-check service (expected +30-40% latency)",
        fix_note: "",
        triage_note: "intended: checkout now calls the fraud-check service (PR #502); the new level is accepted as the baseline",
    },
    EventDef {
        kind: EventKind::CodeRegression,
        endpoint: Some("price-quote"),
        week: 24,
        slot: 2,
        runs: None,
        magnitude: 1.25,
        start_note: "PR #519: per-product discount rules",
        fix_note: "",
        triage_note: "code: PR #519 loads discount rules once per line item (N+1 queries, DiscountRuleRepository.findByProduct in the flame graph); fix not merged yet",
    },
];

/// Releases: (week, slot, version). Every fourth Friday.
pub(crate) const RELEASES: [(u32, u32, &str); 6] = [
    (2, 2, "1.4.0"),
    (6, 2, "1.5.0"),
    (10, 2, "1.6.0"),
    (14, 2, "1.7.0"),
    (18, 2, "1.8.0"),
    (22, 2, "1.9.0"),
];

/// The people who triage alarms at the weekly review.
pub(crate) const TRIAGERS: [&str; 3] = ["Mira Lindqvist", "Jonas Weber", "Aiko Tanaka"];

/// The load-test host, and the shared one the noisy-neighbour runs land on.
pub(crate) const HOST: &str = "perf-01";
pub(crate) const SHARED_HOST: &str = "perf-shared-03";
