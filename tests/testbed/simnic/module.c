// SPDX-License-Identifier: GPL-2.0
/*
 * Pluggable module (transceiver) EEPROM: even ports carry a QSFP28 100GBASE-SR4
 * (SFF-8636), odd ports a QSFP-DD 400GBASE-SR8 (CMIS 5.0).  The pages are
 * served through ethtool_ops .get_module_info/.get_module_eeprom (the ioctl
 * layout: lower page, upper 00h..03h) and .get_module_eeprom_by_page (ethtool
 * netlink, 5.13+).  The control file's "module" command sets temperature,
 * voltage and per-lane power/bias; the module's warning/alarm flags are then
 * recomputed against its own thresholds (live, not latched as on hardware).
 */
#include <linux/ethtool.h>
#include <linux/mutex.h>
#include <linux/version.h>

#include "simnic.h"

#define MOD_PAGE_LEN 128
#define MOD_I2C_ADDR 0x50
#define MOD_MAX_LANES 8

/* Upper pages each module type serves (bank 0). */
enum { UP_00, UP_01, UP_02, UP_03, UP_10, UP_11, UP_NUM };
static const u8 up_page_no[UP_NUM] = { 0x00, 0x01, 0x02, 0x03, 0x10, 0x11 };

struct simnic_module {
	bool ready;
	bool cmis;
	u8 lower[MOD_PAGE_LEN];
	u8 upper[UP_NUM][MOD_PAGE_LEN];
};

static struct simnic_module simnic_modules[SIMNIC_MAX_PORTS];
static DEFINE_MUTEX(simnic_module_lock);

/* Spec byte numbers: 0-127 lower page, 128-255 the upper page. */
static u8 *mod_byte(struct simnic_module *m, int up, int spec_byte)
{
	return spec_byte < MOD_PAGE_LEN ? &m->lower[spec_byte] :
					  &m->upper[up][spec_byte - MOD_PAGE_LEN];
}

static void put16(struct simnic_module *m, int up, int spec_byte, u16 v)
{
	u8 *p = mod_byte(m, up, spec_byte);

	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static u16 get16(struct simnic_module *m, int up, int spec_byte)
{
	u8 *p = mod_byte(m, up, spec_byte);

	return (p[0] << 8) | p[1];
}

static void put_ascii(struct simnic_module *m, int up, int spec_byte, int len,
		      const char *s)
{
	u8 *p = mod_byte(m, up, spec_byte);
	int i, n = strlen(s);

	for (i = 0; i < len; i++)
		p[i] = i < n ? s[i] : ' ';
}

/* Threshold sets as raw words: high alarm, low alarm, high warning, low warning. */
static void put_thresholds(struct simnic_module *m, int up, int spec_byte,
			   const u16 th[4])
{
	int k;

	for (k = 0; k < 4; k++)
		put16(m, up, spec_byte + 2 * k, th[k]);
}

/* Raw units: 1/256 degC (signed), 100 uV, 0.1 uW, 2 uA. */
#define T(c) ((u16)(s16)((c) * 256))
#define MW(x_10uw) ((u16)((x_10uw) * 100)) /* from units of 10 uW */
#define MA(x_10ua) ((u16)((x_10ua) * 5))  /* from units of 10 uA */

/* SFF-8636 rev 2.10a: lower page, upper pages 00h and 03h. */
static void module_init_sff8636(struct simnic_module *m, int index)
{
	static const u16 temp_th[4] = { T(75), T(-5), T(70), T(0) };
	static const u16 vcc_th[4] = { 36300, 29700, 34650, 31350 };
	static const u16 rx_th[4] = { MW(346), MW(4), MW(173), MW(10) };
	static const u16 bias_th[4] = { MA(1200), MA(200), MA(1000), MA(300) };
	static const u16 tx_th[4] = { MW(346), MW(8), MW(173), MW(16) };
	char sn[17];
	int i;

	m->lower[0] = 0x11; /* identifier: QSFP28 */
	m->lower[1] = 0x08; /* SFF-8636 rev 2.8-2.10 */
	m->lower[2] = 0x00; /* paged (Flat_mem 0), data ready */
	put16(m, UP_00, 22, T(36));
	put16(m, UP_00, 26, 32900); /* 3.29 V */
	for (i = 0; i < 4; i++) {
		put16(m, UP_00, 34 + 2 * i, MW(85)); /* Rx power */
		put16(m, UP_00, 42 + 2 * i, MA(660)); /* Tx bias */
		put16(m, UP_00, 50 + 2 * i, MW(79)); /* Tx power */
	}
	m->upper[UP_00][0] = 0x11;
	m->upper[UP_00][130 - 128] = 0x0c; /* connector: MPO 1x12 */
	m->upper[UP_00][192 - 128] = 0x02; /* 100GBASE-SR4 */
	put_ascii(m, UP_00, 148, 16, "Mellanox");
	put_ascii(m, UP_00, 168, 16, "MMA1B00-C100D");
	put_ascii(m, UP_00, 184, 2, "A5");
	snprintf(sn, sizeof(sn), "MT2108FT%05d", index);
	put_ascii(m, UP_00, 196, 16, sn);
	put_ascii(m, UP_00, 212, 8, "210221");
	m->upper[UP_00][220 - 128] = 0x0c; /* Rx avg power, Tx power measured */
	put_thresholds(m, UP_03, 128, temp_th);
	put_thresholds(m, UP_03, 144, vcc_th);
	put_thresholds(m, UP_03, 176, rx_th);
	put_thresholds(m, UP_03, 184, bias_th);
	put_thresholds(m, UP_03, 192, tx_th);
}

/* CMIS 5.0: lower page, upper pages 00h, 01h, 02h, 10h (zero), 11h. */
static void module_init_cmis(struct simnic_module *m, int index)
{
	static const u16 temp_th[4] = { T(80), T(-5), T(75), T(0) };
	static const u16 vcc_th[4] = { 34650, 31350, 34500, 31500 };
	static const u16 tx_th[4] = { MW(316), MW(16), MW(251), MW(25) };
	static const u16 bias_th[4] = { MA(1300), MA(300), MA(1200), MA(400) };
	static const u16 rx_th[4] = { MW(316), MW(4), MW(251), MW(9) };
	static const u8 app[4] = { 0x11, 0x10, 0x88, 0x01 };
	char sn[17];
	int i;

	m->cmis = true;
	m->lower[0] = 0x18;	 /* identifier: QSFP-DD */
	m->lower[1] = 0x50;	 /* CMIS 5.0 */
	m->lower[2] = 0x00;	 /* paged memory */
	m->lower[3] = 0x03 << 1; /* ModuleState: ModuleReady */
	put16(m, UP_00, 14, T(45));
	put16(m, UP_00, 16, 33000);
	m->lower[39] = 4; /* active firmware 4.2 */
	m->lower[40] = 2;
	m->lower[85] = 0x01; /* MMF */
	memcpy(&m->lower[86], app, sizeof(app)); /* 400GAUI-8 / SR8, 8+8 lanes */
	m->upper[UP_00][0] = 0x18;
	put_ascii(m, UP_00, 129, 16, "NVIDIA");
	put_ascii(m, UP_00, 148, 16, "MMA1Z00-NS400");
	put_ascii(m, UP_00, 164, 2, "B1");
	snprintf(sn, sizeof(sn), "MT2231FT%05d", index);
	put_ascii(m, UP_00, 166, 16, sn);
	put_ascii(m, UP_00, 182, 8, "220801  ");
	m->upper[UP_00][203 - 128] = 0x0c; /* MPO 1x12 */
	m->upper[UP_01][151 - 128] = 0x10; /* Rx power: average */
	m->upper[UP_01][160 - 128] = 0x07; /* bias, Tx and Rx power monitors, x1 */
	put_thresholds(m, UP_02, 128, temp_th);
	put_thresholds(m, UP_02, 136, vcc_th);
	put_thresholds(m, UP_02, 176, tx_th);
	put_thresholds(m, UP_02, 184, bias_th);
	put_thresholds(m, UP_02, 192, rx_th);
	for (i = 0; i < MOD_MAX_LANES; i++) {
		put16(m, UP_11, 154 + 2 * i, MW(71));
		put16(m, UP_11, 170 + 2 * i, MA(710));
		put16(m, UP_11, 186 + 2 * i, MW(66));
	}
}

/* Bits: 0 high alarm, 1 low alarm, 2 high warning, 3 low warning. */
static u8 crossings(u16 v, u16 th_base_word[4], bool is_signed)
{
	s32 x = is_signed ? (s16)v : v;
	s32 t[4];
	int k;

	for (k = 0; k < 4; k++)
		t[k] = is_signed ? (s16)th_base_word[k] : th_base_word[k];
	return (x > t[0]) | (x < t[1]) << 1 | (x > t[2]) << 2 | (x < t[3]) << 3;
}

static u8 crossings_at(struct simnic_module *m, u16 v, int up, int th_byte,
		       bool is_signed)
{
	u16 th[4];
	int k;

	for (k = 0; k < 4; k++)
		th[k] = get16(m, up, th_byte + 2 * k);
	return crossings(v, th, is_signed);
}

/* SFF-8636 flag nibble: bit 3 high alarm, 2 low alarm, 1 high warning, 0 low warning. */
static u8 sff_nibble(u8 c)
{
	return (c & 1) << 3 | (c & 2) << 1 | (c & 4) >> 1 | (c & 8) >> 3;
}

static void module_flags_sff8636(struct simnic_module *m)
{
	static const int mon[3] = { 34, 42, 50 };   /* Rx power, Tx bias, Tx power */
	static const int th[3] = { 176, 184, 192 }; /* page 03h thresholds */
	static const int flags[3] = { 9, 11, 13 };  /* two bytes each, lanes 1-4 */
	int k, i;

	m->lower[6] = sff_nibble(crossings_at(m, get16(m, UP_00, 22), UP_03, 128, true)) << 4;
	m->lower[7] = sff_nibble(crossings_at(m, get16(m, UP_00, 26), UP_03, 144, false)) << 4;
	for (k = 0; k < 3; k++) {
		m->lower[flags[k]] = 0;
		m->lower[flags[k] + 1] = 0;
		for (i = 0; i < 4; i++) {
			u8 n = sff_nibble(crossings_at(m, get16(m, UP_00, mon[k] + 2 * i),
						       UP_03, th[k], false));

			m->lower[flags[k] + i / 2] |= i % 2 ? n : n << 4;
		}
	}
}

static void module_flags_cmis(struct simnic_module *m)
{
	static const int mon[3] = { 154, 170, 186 };   /* Tx power, bias, Rx power */
	static const int th[3] = { 176, 184, 192 };    /* page 02h thresholds */
	static const int flags[3] = { 139, 143, 149 }; /* HA, LA, HW, LW bytes */
	int k, i, b;

	m->lower[9] = crossings_at(m, get16(m, UP_00, 14), UP_02, 128, true) |
		      crossings_at(m, get16(m, UP_00, 16), UP_02, 136, false) << 4;
	for (k = 0; k < 3; k++) {
		for (b = 0; b < 4; b++)
			m->upper[UP_11][flags[k] + b - 128] = 0;
		for (i = 0; i < MOD_MAX_LANES; i++) {
			u8 c = crossings_at(m, get16(m, UP_11, mon[k] + 2 * i), UP_02,
					    th[k], false);

			for (b = 0; b < 4; b++)
				if (c & BIT(b))
					m->upper[UP_11][flags[k] + b - 128] |= BIT(i);
		}
	}
}

/* Caller holds simnic_module_lock. */
static struct simnic_module *module_get(struct simnic_port *port)
{
	struct simnic_module *m = &simnic_modules[port->index];

	if (!m->ready) {
		memset(m, 0, sizeof(*m));
		if (port->index % 2)
			module_init_cmis(m, port->index);
		else
			module_init_sff8636(m, port->index);
		if (m->cmis)
			module_flags_cmis(m);
		else
			module_flags_sff8636(m);
		m->ready = true;
	}
	return m;
}

static int up_index(struct simnic_module *m, u8 page)
{
	int i;

	for (i = 0; i < UP_NUM; i++) {
		if (up_page_no[i] != page)
			continue;
		/* SFF-8636 serves 00h-03h (01h/02h zero); CMIS 00h-02h, 10h, 11h. */
		if (!m->cmis && page > 3)
			return -1;
		if (m->cmis && page == 3)
			return -1;
		return i;
	}
	return -1;
}

int simnic_get_module_info(struct net_device *dev, struct ethtool_modinfo *modinfo)
{
	struct simnic_port *port = netdev_priv(dev);

	mutex_lock(&simnic_module_lock);
	/* As mlxsw: CMIS modules report the SFF-8636 layout, page 00h only. */
	modinfo->type = ETH_MODULE_SFF_8636;
	modinfo->eeprom_len = module_get(port)->cmis ? ETH_MODULE_SFF_8636_LEN :
						       ETH_MODULE_SFF_8636_MAX_LEN;
	mutex_unlock(&simnic_module_lock);
	return 0;
}

/* Flat ioctl image: lower page, then upper page N at 128 * (N + 1). */
int simnic_get_module_eeprom(struct net_device *dev, struct ethtool_eeprom *ee,
			     u8 *data)
{
	struct simnic_port *port = netdev_priv(dev);
	struct simnic_module *m;
	u32 pos;

	mutex_lock(&simnic_module_lock);
	m = module_get(port);
	for (pos = ee->offset; pos < ee->offset + ee->len; pos++) {
		u32 page = pos / MOD_PAGE_LEN;
		int up = page ? up_index(m, page - 1) : 0;

		if (page == 0)
			*data++ = m->lower[pos];
		else
			*data++ = up < 0 ? 0 : m->upper[up][pos % MOD_PAGE_LEN];
	}
	mutex_unlock(&simnic_module_lock);
	return 0;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 13, 0)
int simnic_get_module_eeprom_by_page(struct net_device *dev,
				     const struct ethtool_module_eeprom *req,
				     struct netlink_ext_ack *extack)
{
	struct simnic_port *port = netdev_priv(dev);
	struct simnic_module *m;
	int up, n;

	if (req->i2c_address != MOD_I2C_ADDR || req->bank != 0) {
		NL_SET_ERR_MSG(extack, "simnic: only I2C address 0x50, bank 0");
		return -EINVAL;
	}
	if (req->offset + req->length > 2 * MOD_PAGE_LEN)
		return -EINVAL;
	mutex_lock(&simnic_module_lock);
	m = module_get(port);
	up = up_index(m, req->page);
	if (up < 0) {
		mutex_unlock(&simnic_module_lock);
		NL_SET_ERR_MSG(extack, "simnic: page not implemented by this module");
		return -EINVAL;
	}
	for (n = 0; n < req->length; n++) {
		u32 pos = req->offset + n;

		req->data[n] = pos < MOD_PAGE_LEN ? m->lower[pos] :
						    m->upper[up][pos - MOD_PAGE_LEN];
	}
	mutex_unlock(&simnic_module_lock);
	return req->length;
}
#endif

/* Applies one "module" control command; values validated by the caller. */
int simnic_module_set(struct simnic_port *port, enum simnic_module_field field,
		      int lane, s64 value)
{
	struct simnic_module *m;
	int i, lanes;

	mutex_lock(&simnic_module_lock);
	m = module_get(port);
	lanes = m->cmis ? MOD_MAX_LANES : 4;
	if (lane >= lanes) {
		mutex_unlock(&simnic_module_lock);
		return -EINVAL;
	}
	for (i = 0; i < lanes; i++) {
		if (field < SIMNIC_MOD_RX_POWER)
			break;
		if (lane >= 0 && i != lane)
			continue;
		switch (field) {
		case SIMNIC_MOD_RX_POWER: /* uW -> 0.1 uW */
			put16(m, m->cmis ? UP_11 : UP_00, (m->cmis ? 186 : 34) + 2 * i, value * 10);
			break;
		case SIMNIC_MOD_TX_POWER:
			put16(m, m->cmis ? UP_11 : UP_00, (m->cmis ? 154 : 50) + 2 * i, value * 10);
			break;
		default: /* bias: uA -> 2 uA */
			put16(m, m->cmis ? UP_11 : UP_00, (m->cmis ? 170 : 42) + 2 * i, value / 2);
			break;
		}
	}
	if (field == SIMNIC_MOD_TEMP) /* milli-degC -> 1/256 degC */
		put16(m, UP_00, m->cmis ? 14 : 22, (u16)(s16)div_s64(value * 256, 1000));
	else if (field == SIMNIC_MOD_VCC) /* uV -> 100 uV */
		put16(m, UP_00, m->cmis ? 16 : 26, div_s64(value, 100));
	if (m->cmis)
		module_flags_cmis(m);
	else
		module_flags_sff8636(m);
	mutex_unlock(&simnic_module_lock);
	return 0;
}
