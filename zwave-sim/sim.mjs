#!/usr/bin/env node
// Simulated Z-Wave home for homeassist.
//
// One Node process runs:
//   - the real zwave-js driver,
//   - zwave-js's own MockController with MockNodes (wired in-process through a mock serial port),
//   - @zwave-js/server's ZwavejsServer (WebSocket) on 127.0.0.1:PORT, DNS-SD/mDNS disabled.
//
// stdout carries exactly one line, "READY ws://HOST:PORT", once the server listens and every node is
// ready. Everything else goes to stderr. See README.md for the home file format.

import { mkdtempSync, readFileSync, rmSync, mkdirSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

import winston from "winston";
import { createDefaultTransportFormat } from "@zwave-js/core/bindings/log/node";
import { CommandClasses, Duration } from "@zwave-js/core";
import { DoorLockMode, SwitchType, ThermostatMode, ThermostatSetpointType } from "@zwave-js/cc";
import { BinarySwitchCCGet, BinarySwitchCCReport, BinarySwitchCCSet } from "@zwave-js/cc/BinarySwitchCC";
import { MultilevelSwitchCCGet, MultilevelSwitchCCSet } from "@zwave-js/cc/MultilevelSwitchCC";
import { DoorLockCCOperationGet, DoorLockCCOperationSet } from "@zwave-js/cc/DoorLockCC";
import { ThermostatModeCCGet, ThermostatModeCCSet } from "@zwave-js/cc/ThermostatModeCC";
import {
	ThermostatSetpointCCGet,
	ThermostatSetpointCCSet,
} from "@zwave-js/cc/ThermostatSetpointCC";
import { NotificationCCGet, NotificationCCReport } from "@zwave-js/cc/NotificationCC";
import { MockController, MockNode } from "@zwave-js/testing";
import { Driver, ZWaveErrorCodes } from "zwave-js";
import {
	createAndStartDriverWithMockPort,
	createDefaultMockControllerBehaviors,
	createDefaultMockNodeBehaviors,
} from "zwave-js/Testing";
import { ZwavejsServer } from "@zwave-js/server";

// (Static imports are evaluated before this module's body; both variables are read at call time.)
process.env.NO_UPDATE_NOTIFIER = "1";
// The firmware update service is only contacted on explicit request; point it at a closed local port anyway.
process.env.ZWAVEJS_FW_SERVICE_URL = "http://127.0.0.1:9";

const TAG = "[zwave-sim]";
const log = (...args) => process.stderr.write(`${TAG} ${args.join(" ")}\n`);

// ---------------------------------------------------------------------------------------------
// Network safety: this process may only talk to loopback.
// zwave-js reaches the network only on explicit request (statistics, config updates, firmware
// update service, remote serial port discovery via mDNS). Block all of them, and any fetch() to a
// non-loopback host, so that a WebSocket client cannot trigger outside traffic either.
// ---------------------------------------------------------------------------------------------
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
if (typeof globalThis.fetch === "function") {
	const realFetch = globalThis.fetch;
	globalThis.fetch = (input, init) => {
		let host;
		try {
			const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
			host = url.hostname;
		} catch {
			host = undefined;
		}
		if (!host || !LOOPBACK_HOSTS.has(host)) {
			return Promise.reject(new Error(`zwave-sim: network access to ${host ?? "?"} is disabled`));
		}
		return realFetch(input, init);
	};
}

function neuterNetworkFeatures(driver) {
	const refuse = (what) => async () => {
		log(`refused: ${what} (no network access in the simulator)`);
		throw new Error(`${what} is disabled in the Z-Wave simulator (no network access)`);
	};
	driver.enableStatistics = () => log("refused: enableStatistics (statistics stay disabled)");
	driver.checkForConfigUpdates = refuse("checkForConfigUpdates");
	driver.installConfigUpdate = refuse("installConfigUpdate");
}
function neuterControllerNetworkFeatures(driver) {
	const refuse = (what) => async () => {
		log(`refused: ${what} (no network access in the simulator)`);
		throw new Error(`${what} is disabled in the Z-Wave simulator (no network access)`);
	};
	const ctrl = driver.controller;
	ctrl.getAvailableFirmwareUpdates = refuse("getAvailableFirmwareUpdates");
	ctrl.getAllAvailableFirmwareUpdates = refuse("getAllAvailableFirmwareUpdates");
	ctrl.firmwareUpdateOTA = refuse("firmwareUpdateOTA");
}
Driver.enumerateSerialPorts = async () => [];

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------
function usage(msg) {
	if (msg) log(`error: ${msg}`);
	process.stderr.write(
		"usage: node zwave-sim/sim.mjs --port PORT --home HOME.json [--host 127.0.0.1] [--cache-dir DIR] [--log-level warn]\n",
	);
	process.exit(2);
}

let args;
try {
	({ values: args } = parseArgs({
		options: {
			port: { type: "string", default: "3000" },
			home: { type: "string" },
			host: { type: "string", default: "127.0.0.1" },
			"cache-dir": { type: "string" },
			"log-level": { type: "string", default: "warn" },
			help: { type: "boolean", short: "h" },
		},
		strict: true,
	}));
} catch (e) {
	usage(e.message);
}
if (args.help) usage();
if (!args.home) usage("--home is required");
const PORT = Number(args.port);
if (!Number.isInteger(PORT) || PORT < 1 || PORT > 65535) usage(`invalid --port ${args.port}`);
const HOST = args.host;
if (!["127.0.0.1", "localhost", "::1"].includes(HOST)) {
	usage(`--host must be a loopback address (127.0.0.1, ::1 or localhost), got ${HOST}`);
}
const LOG_LEVELS = ["error", "warn", "info", "http", "verbose", "debug", "silly"];
if (!LOG_LEVELS.includes(args["log-level"])) usage(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);

// ---------------------------------------------------------------------------------------------
// Home file
// ---------------------------------------------------------------------------------------------
const KINDS = [
	"binary_switch",
	"binary_switch_plug",
	"dimmer",
	"window_covering",
	"thermostat",
	"door_lock",
	"multisensor",
];
const THERMOSTAT_MODES = { off: ThermostatMode.Off, heat: ThermostatMode.Heat, cool: ThermostatMode.Cool, auto: ThermostatMode.Auto };

function loadHome(file) {
	let raw;
	try {
		raw = readFileSync(file, "utf8");
	} catch (e) {
		throw new Error(`cannot read home file ${file}: ${e.message}`);
	}
	let home;
	try {
		home = JSON.parse(raw);
	} catch (e) {
		throw new Error(`${file}: invalid JSON: ${e.message}`);
	}
	const fail = (where, what) => {
		throw new Error(`${file}: ${where}: ${what}`);
	};
	if (typeof home !== "object" || home === null || !Array.isArray(home.nodes)) {
		fail("top level", 'expected an object with a "nodes" array');
	}
	if (home.tx_delay_ms !== undefined && !(Number.isInteger(home.tx_delay_ms) && home.tx_delay_ms >= 0 && home.tx_delay_ms <= 1000)) {
		fail("tx_delay_ms", "must be an integer 0..1000 (simulated radio delay per frame, ms)");
	}
	if (home.optimistic_updates !== undefined && typeof home.optimistic_updates !== "boolean") {
		fail("optimistic_updates", "must be true or false");
	}
	const seen = new Set();
	for (const [i, n] of home.nodes.entries()) {
		const where = `nodes[${i}]${n && typeof n.name === "string" ? ` (${n.name})` : ""}`;
		if (typeof n !== "object" || n === null) fail(where, "must be an object");
		if (!Number.isInteger(n.id) || n.id < 2 || n.id > 232) fail(where, '"id" must be an integer 2..232');
		if (seen.has(n.id)) fail(where, `duplicate id ${n.id}`);
		seen.add(n.id);
		if (typeof n.name !== "string" || !n.name.trim()) fail(where, '"name" must be a non-empty string');
		if (n.location !== undefined && typeof n.location !== "string") fail(where, '"location" must be a string');
		if (!KINDS.includes(n.kind)) fail(where, `"kind" must be one of ${KINDS.join(", ")}`);
		for (const flag of ["supervision", "confirm"]) {
			if (n[flag] !== undefined && typeof n[flag] !== "boolean") fail(where, `"${flag}" must be true or false`);
		}
		if (n.supervision === true && n.confirm === false) {
			fail(where, '"confirm": false cannot be combined with "supervision": true');
		}
		if (n.initial !== undefined && (typeof n.initial !== "object" || n.initial === null)) {
			fail(where, '"initial" must be an object');
		}
		if (n.travel_time_ms !== undefined && !(Number.isInteger(n.travel_time_ms) && n.travel_time_ms >= 0)) {
			fail(where, '"travel_time_ms" must be an integer >= 0');
		}
		const init = n.initial ?? {};
		if (n.kind === "thermostat") {
			if (init.mode !== undefined && !(init.mode in THERMOSTAT_MODES)) {
				fail(where, `initial.mode must be one of ${Object.keys(THERMOSTAT_MODES).join(", ")}`);
			}
			if (n.modes !== undefined && !(Array.isArray(n.modes) && n.modes.every((m) => m in THERMOSTAT_MODES))) {
				fail(where, `"modes" must be a list of ${Object.keys(THERMOSTAT_MODES).join(", ")}`);
			}
			const [lo, hi] = n.setpoint_range ?? [5, 35];
			if (!(typeof lo === "number" && typeof hi === "number" && lo < hi)) {
				fail(where, '"setpoint_range" must be [min, max] in °C');
			}
		}
		if ((n.kind === "dimmer" || n.kind === "window_covering") && init.level !== undefined) {
			if (!(Number.isInteger(init.level) && init.level >= 0 && init.level <= 99)) {
				fail(where, "initial.level must be an integer 0..99");
			}
		}
	}
	return home;
}

// ---------------------------------------------------------------------------------------------
// Mock node construction
// ---------------------------------------------------------------------------------------------
const cc = (ccId, version, extra = {}) => ({ ccId, isSupported: true, version, ...extra });

// Present on every node so the driver can query versions, identity and Z-Wave Plus info.
const COMMON_CCS = [
	cc(CommandClasses.Version, 3),
	cc(CommandClasses["Manufacturer Specific"], 2),
	cc(CommandClasses["Z-Wave Plus Info"], 2),
];

// Mock state keys used by zwave-js's own mock CC behaviors (zwave-js 15.29.0).
const STATE = {
	doorLockMode: "DoorLock_currentMode",
	thermostatMode: "ThermostatMode_mode",
	multilevelLastOn: "HomeSim_MultilevelSwitch_lastOn",
};

/** Returns { capabilities, initState, sim } for one node of the home file. */
function buildNode(n) {
	const init = n.initial ?? {};
	const ccs = [...COMMON_CCS];
	const initState = new Map();
	const sim = {}; // live sensor values, read by getValue() callbacks
	let generic, specific;

	switch (n.kind) {
		case "binary_switch":
		case "binary_switch_plug":
			// Binary Switch / Binary Power Switch
			generic = 0x10;
			specific = 0x01;
			ccs.push(cc(CommandClasses["Binary Switch"], 2, { defaultValue: !!init.on }));
			break;
		case "dimmer":
			// Multilevel Switch / Multilevel Power Switch
			generic = 0x11;
			specific = 0x01;
			ccs.push(
				cc(CommandClasses["Multilevel Switch"], 4, {
					defaultValue: init.level ?? 0,
					primarySwitchType: SwitchType["Down/Up"],
					travelTime: n.travel_time_ms ?? 0,
				}),
			);
			if (init.level > 0) initState.set(STATE.multilevelLastOn, init.level);
			break;
		case "window_covering":
			// Multilevel Switch / Motor Control Class C (a window covering motor); 0 = closed, 99 = open
			generic = 0x11;
			specific = 0x07;
			ccs.push(
				cc(CommandClasses["Multilevel Switch"], 4, {
					defaultValue: init.level ?? 0,
					primarySwitchType: SwitchType["Close/Open"],
					travelTime: n.travel_time_ms ?? 0,
				}),
			);
			break;
		case "thermostat": {
			// Thermostat / General Thermostat V2
			generic = 0x08;
			specific = 0x06;
			const [minValue, maxValue] = n.setpoint_range ?? [5, 35];
			const modes = (n.modes ?? ["off", "heat"]).map((m) => THERMOSTAT_MODES[m]);
			ccs.push(cc(CommandClasses["Thermostat Mode"], 3, { supportedModes: modes }));
			ccs.push(
				cc(CommandClasses["Thermostat Setpoint"], 3, {
					setpoints: {
						[ThermostatSetpointType.Heating]: {
							minValue,
							maxValue,
							defaultValue: init.setpoint ?? 20,
							scale: "°C",
						},
					},
				}),
			);
			sim.temperature = init.temperature ?? 21.5;
			ccs.push(
				cc(CommandClasses["Multilevel Sensor"], 11, {
					sensors: { 1: { supportedScales: [0] } }, // Air temperature, °C
					getValue: (type) => (type === 1 ? sim.temperature : undefined),
				}),
			);
			initState.set(STATE.thermostatMode, THERMOSTAT_MODES[init.mode ?? "heat"]);
			break;
		}
		case "door_lock":
			// Entry Control / Door Lock
			generic = 0x40;
			specific = 0x01;
			ccs.push(
				cc(CommandClasses["Door Lock"], 4, {
					supportedDoorLockModes: [DoorLockMode.Unsecured, DoorLockMode.Secured],
					// The mock's Operation Report never updates door/bolt/latch status; do not advertise them.
					doorSupported: false,
					boltSupported: false,
					latchSupported: false,
					travelTime: n.travel_time_ms ?? 0,
				}),
			);
			initState.set(STATE.doorLockMode, init.locked === false ? DoorLockMode.Unsecured : DoorLockMode.Secured);
			break;
		case "multisensor":
			// Multilevel Sensor / Routing Multilevel Sensor
			generic = 0x21;
			specific = 0x01;
			sim.temperature = init.temperature ?? 21.5;
			sim.humidity = init.humidity ?? 45;
			sim.motion = !!init.motion;
			ccs.push(
				cc(CommandClasses["Multilevel Sensor"], 11, {
					sensors: {
						1: { supportedScales: [0] }, // Air temperature, °C
						5: { supportedScales: [0] }, // Humidity, %
					},
					getValue: (type) => (type === 1 ? sim.temperature : type === 5 ? sim.humidity : undefined),
				}),
			);
			ccs.push(
				cc(CommandClasses.Notification, 8, {
					supportsV1Alarm: false,
					notificationTypesAndEvents: { 0x07: [0x08] }, // Home Security: Motion detection
				}),
			);
			break;
	}
	if (n.supervision) ccs.push(cc(CommandClasses.Supervision, 2));

	return {
		capabilities: {
			genericDeviceClass: generic,
			specificDeviceClass: specific,
			commandClasses: ccs,
		},
		initState,
		sim,
	};
}

/** Creates the Get that reads back what a Set changed, or undefined if the CC is not one we confirm. */
function readBackGetFor(setCC, nodeId) {
	const base = { nodeId, endpointIndex: setCC.endpointIndex };
	if (setCC instanceof BinarySwitchCCSet) return new BinarySwitchCCGet(base);
	if (setCC instanceof MultilevelSwitchCCSet) return new MultilevelSwitchCCGet(base);
	if (setCC instanceof DoorLockCCOperationSet) return new DoorLockCCOperationGet(base);
	if (setCC instanceof ThermostatModeCCSet) return new ThermostatModeCCGet(base);
	if (setCC instanceof ThermostatSetpointCCSet) {
		return new ThermostatSetpointCCGet({ ...base, setpointType: setCC.setpointType });
	}
	return undefined;
}
const isActuatorSet = (c) =>
	c instanceof BinarySwitchCCSet
	|| c instanceof MultilevelSwitchCCSet
	|| c instanceof DoorLockCCOperationSet
	|| c instanceof ThermostatModeCCSet
	|| c instanceof ThermostatSetpointCCSet;

/** Ask the node's other behaviors (zwave-js defaults + our fixes) to handle a CC. */
async function delegate(controller, self, skip, receivedCC) {
	for (const b of self.behaviors) {
		if (b === skip || !b.handleCC) continue;
		const r = await b.handleCC(controller, self, receivedCC);
		if (r) return r;
	}
	return undefined;
}

// The stock mock rejects every heating setpoint above the minimum (it tests `value > minValue`).
// Accept values inside [minValue, maxValue] instead; state keys match the stock Get behavior.
const thermostatSetpointSetFixed = {
	handleCC(controller, self, receivedCC) {
		if (!(receivedCC instanceof ThermostatSetpointCCSet)) return;
		const caps = self.getCCCapabilities(CommandClasses["Thermostat Setpoint"], receivedCC.endpointIndex);
		const sp = caps?.setpoints?.[receivedCC.setpointType];
		const value = receivedCC.value;
		if (!sp || typeof value !== "number" || value < sp.minValue || value > sp.maxValue) {
			return { action: "fail" };
		}
		self.state.set(`ThermostatSetpoint_setpoint_${receivedCC.setpointType}`, value);
		self.state.set(`ThermostatSetpoint_scale_${receivedCC.setpointType}`, receivedCC.scale);
		return { action: "ok" };
	},
};

// Multilevel Switch Set 0xFF means "restore the last non-zero level"; the stock mock would store 255.
const multilevelSwitchRestoreLevel = {
	transformIncomingCC(controller, self, receivedCC) {
		if (receivedCC instanceof MultilevelSwitchCCSet) {
			if (receivedCC.targetValue === 0xff) {
				receivedCC.targetValue = self.state.get(STATE.multilevelLastOn) ?? 99;
			}
			if (receivedCC.targetValue > 0 && receivedCC.targetValue <= 99) {
				self.state.set(STATE.multilevelLastOn, receivedCC.targetValue);
			}
		}
		return receivedCC;
	},
};

// The stock Binary Switch Get answer is a V1 report (currentValue only); answer like a V2 device so
// targetValue and duration are known from the interview on.
const binarySwitchGetV2 = {
	handleCC(controller, self, receivedCC) {
		if (!(receivedCC instanceof BinarySwitchCCGet)) return;
		const caps = self.getCCCapabilities(CommandClasses["Binary Switch"], receivedCC.endpointIndex);
		const currentValue = self.state.get("BinarySwitch_currentValue") ?? caps?.defaultValue ?? false;
		const cc = new BinarySwitchCCReport({
			nodeId: controller.ownNodeId,
			currentValue,
			targetValue: currentValue,
			duration: new Duration(0, "seconds"),
		});
		return { action: "sendCC", cc };
	},
};

// Notification Get (pull mode) is not answered by the stock mock. Report the current motion state.
function notificationGetBehavior(sim) {
	return {
		handleCC(controller, self, receivedCC) {
			if (!(receivedCC instanceof NotificationCCGet)) return;
			if (receivedCC.notificationType !== undefined && receivedCC.notificationType !== 0x07) {
				return { action: "stop" };
			}
			const cc = new NotificationCCReport({
				nodeId: controller.ownNodeId,
				notificationType: 0x07,
				notificationStatus: 0xff,
				notificationEvent: sim.motion ? 0x08 : 0x00,
			});
			return { action: "sendCC", cc };
		},
	};
}

// How a node answers actuator Set commands:
//  - confirm (default): apply via the stock behavior; if the Set was supervised, the Supervision hook
//    turns "ok" into SupervisionReport SUCCESS; if not, send the matching Report right away (the value
//    a Get would return), like a device reporting its new state to its lifeline.
//  - confirm: false: accept the frame (radio ACK only) but do nothing: state unchanged, no Report.
//    Gets are still answered, with the unchanged state.
function setConfirmBehavior(confirm) {
	const self_ = {
		async handleCC(controller, self, receivedCC) {
			if (!isActuatorSet(receivedCC)) return;
			if (!confirm) return { action: "stop" };
			const response = await delegate(controller, self, self_, receivedCC);
			if (!response) return;
			const supervised = receivedCC.isEncapsulatedWith(CommandClasses.Supervision);
			if (response.action === "ok" && !supervised && !response.durationMs) {
				const get = readBackGetFor(receivedCC, self.id);
				const report = get && (await delegate(controller, self, self_, get));
				if (report?.action === "sendCC") return report;
			}
			return response;
		},
	};
	return self_;
}

async function createMocks(home, mockPort, serial) {
	const mockController = await MockController.create({
		homeId: 0x7e570001,
		ownNodeId: 1,
		mockPort,
		serial,
	});
	mockController.defineBehavior(...createDefaultMockControllerBehaviors());

	const mockNodes = [];
	for (const n of home.nodes) {
		const { capabilities, initState, sim } = buildNode(n);
		const mockNode = await MockNode.create({ id: n.id, controller: mockController, capabilities });
		for (const [k, v] of initState) mockNode.state.set(k, v);
		mockNode.defineBehavior(...createDefaultMockNodeBehaviors());
		// defineBehavior() puts later behaviors first, so these take precedence over the defaults.
		mockNode.defineBehavior(
			thermostatSetpointSetFixed,
			binarySwitchGetV2,
			notificationGetBehavior(sim),
			multilevelSwitchRestoreLevel,
		);
		mockNode.defineBehavior(setConfirmBehavior(n.confirm !== false));
		mockController.addNode(mockNode);
		mockNodes.push(mockNode);
	}
	return { mockController, mockNodes };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------
function checkPortFree(host, port) {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.once("error", reject);
		srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve()));
	});
}

let driver;
let server;
let mockController;
let mockNodes = [];
let cacheDir;
let ownCacheDir = false;
let shuttingDown = false;

async function shutdown(code, reason) {
	if (shuttingDown) return;
	shuttingDown = true;
	if (reason) log(`shutting down (${reason})`);
	// Never hang: whatever happens, be gone within ~2.5 s.
	setTimeout(() => {
		log("shutdown took too long, exiting");
		cleanupCache();
		process.exit(code);
	}, 2500).unref();
	try {
		await server?.destroy();
	} catch (e) {
		log(`error closing server: ${e?.message ?? e}`);
	}
	try {
		await driver?.destroy();
	} catch (e) {
		log(`error destroying driver: ${e?.message ?? e}`);
	}
	try {
		mockController?.destroy();
	} catch {
		// ignore
	}
	cleanupCache();
	process.exit(code);
}

function cleanupCache() {
	if (ownCacheDir && cacheDir) {
		try {
			rmSync(cacheDir, { recursive: true, force: true });
		} catch {
			// ignore
		}
		ownCacheDir = false;
	}
}

process.on("unhandledRejection", (e) => log(`unhandled rejection: ${e?.stack ?? e}`));
process.on("SIGTERM", () => void shutdown(0, "SIGTERM"));
process.on("SIGINT", () => void shutdown(0, "SIGINT"));
process.on("SIGHUP", () => void shutdown(0, "SIGHUP"));
// If the parent reads stdout through a pipe and goes away, writes fail with EPIPE: leave.
process.stdout.on("error", () => void shutdown(0, "stdout closed"));
// If the parent dies without signalling us, we get re-parented: leave.
const initialPpid = process.ppid;
setInterval(() => {
	if (process.ppid !== initialPpid) void shutdown(0, "parent process exited");
}, 1000).unref();

const STARTUP_TIMEOUT_MS = 60_000;

async function main() {
	const started = Date.now();
	// Nothing else holds the event loop open until the WebSocket server listens.
	const keepAlive = setInterval(() => {}, 1 << 30);
	let home;
	try {
		home = loadHome(args.home);
	} catch (e) {
		log(`error: ${e.message}`);
		process.exit(2);
	}

	try {
		await checkPortFree(HOST, PORT);
	} catch (e) {
		log(
			e.code === "EADDRINUSE"
				? `error: port ${PORT} on ${HOST} is already in use`
				: `error: cannot listen on ${HOST}:${PORT}: ${e.message}`,
		);
		process.exit(3);
	}

	if (args["cache-dir"]) {
		cacheDir = path.resolve(args["cache-dir"]);
		mkdirSync(cacheDir, { recursive: true });
	} else {
		cacheDir = mkdtempSync(path.join(tmpdir(), "zwave-sim-"));
		ownCacheDir = true;
	}

	// Expected on a simulated, unsecured network; not worth a warning on every start.
	const EXPECTED_NOISE = /No device config found|No network key for/;
	const dropExpectedNoise = winston.format((info) =>
		EXPECTED_NOISE.test(String(info.message)) ? false : info
	);
	const logTransport = new winston.transports.Console({
		stderrLevels: LOG_LEVELS,
		format: winston.format.combine(dropExpectedNoise(), createDefaultTransportFormat(false, false)),
	});

	const started_ = await createAndStartDriverWithMockPort({
		logConfig: {
			enabled: true,
			level: args["log-level"],
			// Only our transport (stderr); never the built-in console transport (stdout).
			forceConsole: false,
			logToFile: false,
			transports: [logTransport],
			showLogo: false,
		},
		storage: {
			cacheDir,
			lockDir: path.join(cacheDir, "locks"),
		},
		features: {
			softReset: false,
			unresponsiveControllerRecovery: true,
			watchdog: false,
		},
		testingHooks: {
			// The mock controller has no bootloader to identify.
			skipFirmwareIdentification: true,
		},
		// Like zwave-server: every client sees value updates that another client caused.
		emitValueUpdateAfterSetValue: true,
		// By default currentValue changes only when the (mock) device reports or confirms it.
		disableOptimisticValueUpdate: home.optimistic_updates !== true,
	});
	driver = started_.driver;
	neuterNetworkFeatures(driver);
	driver.on("error", (e) => {
		log(`driver error: ${e?.message ?? e}`);
		// The driver cannot recover from this; let the parent restart us.
		if (e?.code === ZWaveErrorCodes.Driver_Failed) void shutdown(1, "driver failed");
	});

	({ mockController, mockNodes } = await createMocks(home, started_.mockPort, started_.serial));
	const txDelayMs = home.tx_delay_ms ?? 10;
	for (const mn of mockNodes) mn.capabilities.txDelay = 0;

	const allReady = new Promise((resolve, reject) => {
		driver.once("driver ready", () => {
			neuterControllerNetworkFeatures(driver);
			if ([...driver.controller.nodes.values()].every((node) => node.ready)) resolve();
		});
		driver.once("all nodes ready", resolve);
		driver.once("error", reject);
		setTimeout(
			() => reject(new Error(`driver and nodes not ready after ${STARTUP_TIMEOUT_MS / 1000} s`)),
			STARTUP_TIMEOUT_MS,
		).unref();
	});
	started_.continueStartup();
	await allReady;
	// Interview ran with (almost) no simulated radio delay; use the realistic delay from now on.
	for (const mn of mockNodes) mn.capabilities.txDelay = txDelayMs;

	for (const n of home.nodes) {
		const node = driver.controller.nodes.get(n.id);
		if (!node) throw new Error(`node ${n.id} (${n.name}) did not join the network`);
		node.name = n.name;
		node.location = n.location ?? "";
	}

	// The mock records every frame for test assertions; drop them so a long run does not grow.
	setInterval(() => {
		for (const mn of mockNodes) {
			mn.clearReceivedControllerFrames();
			mn.clearSentControllerFrames();
		}
		mockController.clearReceivedHostMessages();
	}, 30_000).unref();

	server = new ZwavejsServer(driver, {
		port: PORT,
		host: HOST,
		enableDNSServiceDiscovery: false,
		logger: {
			error: (m, e) => log(`server error: ${m?.message ?? m}${e ? ` ${e.message ?? e}` : ""}`),
			warn: (m) => log(`server warning: ${m}`),
			info: () => {},
			debug: () => {},
		},
	});
	server.on("error", () => {}); // already logged by the logger above
	await server.start(true);

	const url = `ws://${HOST.includes(":") ? `[${HOST}]` : HOST}:${PORT}`;
	log(`${home.nodes.length} nodes ready, listening on ${url} (${Date.now() - started} ms, cache ${cacheDir})`);
	process.stdout.write(`READY ${url}\n`);
	clearInterval(keepAlive);
}

main().catch((e) => {
	if (e?.code === "EADDRINUSE") {
		log(`error: port ${PORT} on ${HOST} is already in use`);
	} else {
		log(`error: ${e?.stack ?? e}`);
	}
	void shutdown(1);
});
